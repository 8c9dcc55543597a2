import { MalformedInputError } from '@lockfabric/ports';
import type { NodeId, PacketType } from '@lockfabric/ports';
import type { FaultRule } from '@lockfabric/switch';
import { PacketType as WirePacketType, packetTypes } from '@lockfabric/wire';
import type { FaultSpec as WireFaultSpec } from '@lockfabric/wire';

/**
 * How long a reordered packet may be held back. The wire spec gives only a probability; 1 ms is
 * several NATS hops on one machine, enough for the packets sent after it to overtake it.
 */
export const DEFAULT_REORDER_WINDOW_NS = 1_000_000;

/** Longest delay a fault may impose: a longer one would look like loss and pin timers. */
export const MAX_FAULT_DELAY_NS = 10_000_000_000;

/** Which copies a wire fault applies to; rules with equal selectors replace each other on `ctl.fault.switch`. */
export interface FaultSelector {
  readonly packetType?: PacketType;
  readonly machine?: NodeId;
}

/** A wire FaultSpec as a switch fault rule; `rule` is undefined when the spec has no effect (it clears). */
export interface ConvertedFault {
  readonly selector: FaultSelector;
  readonly key: string;
  readonly rule: FaultRule | undefined;
}

export function selectorKey(selector: FaultSelector): string {
  return `${selector.packetType ?? '*'}/${selector.machine ?? '*'}`;
}

/**
 * Whether a spec addressed to `target` is for the switch of `rack`: empty and `*` address every
 * switch, otherwise the target is the rack id in decimal.
 */
export function faultTargetsRack(target: string, rack: number): boolean {
  return target === '' || target === '*' || target === String(rack);
}

/**
 * Converts one wire FaultSpec. Throws {@link MalformedInputError} naming `source` for values no
 * switch can apply (probabilities outside [0, 1], negative or huge delays, unknown packet types).
 */
export function faultFromWire(spec: WireFaultSpec, source: string, reorderWindowNs = DEFAULT_REORDER_WINDOW_NS): ConvertedFault {
  const problems: string[] = [];
  for (const [name, p] of [
    ['loss', spec.loss],
    ['duplicate', spec.duplicate],
    ['reorder', spec.reorder],
  ] as const) {
    if (!Number.isFinite(p) || p < 0 || p > 1) problems.push(`${name} must be a probability in [0, 1], got ${p}`);
  }
  if (spec.delayNs < 0n || spec.delayNs > BigInt(MAX_FAULT_DELAY_NS)) problems.push(`delay_ns must be in [0, ${MAX_FAULT_DELAY_NS}], got ${spec.delayNs}`);
  if (problems.length > 0) throw new MalformedInputError(source, `fault spec for target '${spec.target}': ${problems.join('; ')}`);

  const selector: FaultSelector = {
    ...(spec.packetType === WirePacketType.UNSPECIFIED ? {} : { packetType: packetTypes.fromWire(spec.packetType, source) }),
    ...(spec.machine === undefined ? {} : { machine: spec.machine }),
  };
  const delayNs = Number(spec.delayNs);
  const effective = spec.loss > 0 || spec.duplicate > 0 || spec.reorder > 0 || delayNs > 0;
  const rule: FaultRule | undefined = effective
    ? {
        ...(selector.packetType === undefined ? {} : { packetTypes: [selector.packetType] }),
        ...(selector.machine === undefined ? {} : { machines: [selector.machine] }),
        ...(spec.loss > 0 ? { loss: spec.loss } : {}),
        ...(spec.duplicate > 0 ? { duplicate: spec.duplicate } : {}),
        // "extra delay of every affected packet": a certain delay of exactly delay_ns
        ...(delayNs > 0 ? { delay: 1, delayNsMin: delayNs, delayNsMax: delayNs } : {}),
        ...(spec.reorder > 0 ? { reorder: spec.reorder, reorderNsMax: reorderWindowNs } : {}),
      }
    : undefined;
  return { selector, key: selectorKey(selector), rule };
}
