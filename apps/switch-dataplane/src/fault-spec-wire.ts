import { MalformedInputError } from '@lockfabric/ports';
import type { NodeId, PacketType } from '@lockfabric/ports';
import type { FaultDirection, FaultRule } from '@lockfabric/switch';
import { FaultDirection as WireFaultDirection, PacketType as WirePacketType, packetTypes } from '@lockfabric/wire';
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
  /** Absent: egress. */
  readonly direction?: Exclude<FaultDirection, 'egress'>;
}

const DIRECTIONS: ReadonlyMap<WireFaultDirection, FaultDirection> = new Map([
  [WireFaultDirection.UNSPECIFIED, 'egress'],
  [WireFaultDirection.EGRESS, 'egress'],
  [WireFaultDirection.INGRESS, 'ingress'],
  [WireFaultDirection.BOTH, 'both'],
]);

/** A wire FaultSpec as a switch fault rule; `rule` is undefined when the spec has no effect (it clears). */
export interface ConvertedFault {
  readonly selector: FaultSelector;
  readonly key: string;
  readonly rule: FaultRule | undefined;
}

/** `type/machine` for egress (as before ingress faults existed), `ingress:type/machine` or `both:…` otherwise. */
export function selectorKey(selector: FaultSelector): string {
  const base = `${selector.packetType ?? '*'}/${selector.machine ?? '*'}`;
  return selector.direction ? `${selector.direction}:${base}` : base;
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
  if (spec.delayMaxNs !== 0n && (spec.delayMaxNs < spec.delayNs || spec.delayMaxNs > BigInt(MAX_FAULT_DELAY_NS))) {
    problems.push(`delay_max_ns must be 0 (a fixed delay) or in [delay_ns, ${MAX_FAULT_DELAY_NS}], got ${spec.delayMaxNs} with delay_ns ${spec.delayNs}`);
  }
  const direction = DIRECTIONS.get(spec.direction);
  if (direction === undefined) problems.push(`direction ${String(spec.direction)} is not a fault direction (egress 1, ingress 2, both 3)`);
  if (problems.length > 0) throw new MalformedInputError(source, `fault spec for target '${spec.target}': ${problems.join('; ')}`);

  const selector: FaultSelector = {
    ...(spec.packetType === WirePacketType.UNSPECIFIED ? {} : { packetType: packetTypes.fromWire(spec.packetType, source) }),
    ...(spec.machine === undefined ? {} : { machine: spec.machine }),
    ...(direction === 'ingress' || direction === 'both' ? { direction } : {}),
  };
  const delayNs = Number(spec.delayNs);
  const delayMaxNs = spec.delayMaxNs === 0n ? delayNs : Number(spec.delayMaxNs);
  const effective = spec.loss > 0 || spec.duplicate > 0 || spec.reorder > 0 || delayMaxNs > 0;
  const rule: FaultRule | undefined = effective
    ? {
        ...(selector.direction === undefined ? {} : { direction: selector.direction }),
        ...(selector.packetType === undefined ? {} : { packetTypes: [selector.packetType] }),
        ...(selector.machine === undefined ? {} : { machines: [selector.machine] }),
        ...(spec.loss > 0 ? { loss: spec.loss } : {}),
        ...(spec.duplicate > 0 ? { duplicate: spec.duplicate } : {}),
        // "extra delay of every affected packet": a certain delay of exactly delay_ns, or uniform up to delay_max_ns
        ...(delayMaxNs > 0 ? { delay: 1, delayNsMin: delayNs, delayNsMax: delayMaxNs } : {}),
        ...(spec.reorder > 0 ? { reorder: spec.reorder, reorderNsMax: reorderWindowNs } : {}),
      }
    : undefined;
  return { selector, key: selectorKey(selector), rule };
}
