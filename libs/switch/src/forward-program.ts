import type { LockPacket, PacketType } from '@lockfabric/ports';
import type { EgressAction } from './egress.js';
import { SwitchControlError } from './errors.js';
import type { PacketContext } from './packet-context.js';
import { PACKET_TYPES, packetTypeIndex } from './packet-types.js';
import type { Pipeline } from './pipeline.js';
import type { SwitchProgram } from './program.js';
import type { RegisterArray } from './register-array.js';

export const FORWARD_DECISIONS = ['routed', 'no-dst'] as const;
export type ForwardDecision = (typeof FORWARD_DECISIONS)[number];

export const FORWARD_TYPE_COUNTER = 'forward.packets-by-type';
export const FORWARD_DECISION_COUNTER = 'forward.packets-by-decision';

export interface ForwardCounts {
  readonly byType: Readonly<Record<PacketType, number>>;
  readonly byDecision: Readonly<Record<ForwardDecision, number>>;
}

export interface ForwardProgram extends SwitchProgram {
  /** The program's own counters, read from its register arrays (32-bit, wrapping). */
  counts(): ForwardCounts;
}

export interface ForwardProgramOptions {
  /** Stage holding the two counter arrays; default 0. */
  readonly counterStage?: number;
}

/**
 * Plain routing (SrvLock, ParLock, FissLock's out-of-range fallback): unicast to `packet.dst`; a
 * packet without `dst` is dropped with reason `no-dst`. It counts packets by type and by decision
 * the way a P4 program would, in two 32-bit register arrays, one read-modify-write each per
 * packet, so the control plane can read the counts like any register.
 */
export function forwardProgram(options: ForwardProgramOptions = {}): ForwardProgram {
  let byType: RegisterArray | undefined;
  let byDecision: RegisterArray | undefined;
  const increment = (old: number) => ({ next: (old + 1) >>> 0, out: undefined });

  return {
    name: 'forward',
    build(pipeline: Pipeline): void {
      const stage = options.counterStage ?? 0;
      byType = pipeline.addArray({ name: FORWARD_TYPE_COUNTER, width: 32, length: PACKET_TYPES.length, stage });
      byDecision = pipeline.addArray({ name: FORWARD_DECISION_COUNTER, width: 32, length: FORWARD_DECISIONS.length, stage });
    },
    process(packet: LockPacket, _ingress, ctx: PacketContext): EgressAction[] {
      const counters = built(byType, byDecision);
      ctx.update(counters.byType, packetTypeIndex(packet.type), increment);
      const decision: ForwardDecision = packet.dst === undefined ? 'no-dst' : 'routed';
      ctx.update(counters.byDecision, FORWARD_DECISIONS.indexOf(decision), increment);
      ctx.decide(decision);
      return packet.dst === undefined ? [{ kind: 'drop', reason: 'no-dst' }] : [{ kind: 'unicast', machine: packet.dst, packet }];
    },
    counts(): ForwardCounts {
      const counters = built(byType, byDecision);
      const typeCounts = counters.byType.readRange(0, PACKET_TYPES.length);
      const decisionCounts = counters.byDecision.readRange(0, FORWARD_DECISIONS.length);
      return {
        byType: Object.fromEntries(PACKET_TYPES.map((type, i) => [type, typeCounts[i] as number])) as Record<PacketType, number>,
        byDecision: Object.fromEntries(FORWARD_DECISIONS.map((d, i) => [d, decisionCounts[i] as number])) as Record<ForwardDecision, number>,
      };
    },
  };
}

function built(byType: RegisterArray | undefined, byDecision: RegisterArray | undefined): { byType: RegisterArray; byDecision: RegisterArray } {
  if (!byType || !byDecision) throw new SwitchControlError('the forward program has not been built into a switch');
  return { byType, byDecision };
}
