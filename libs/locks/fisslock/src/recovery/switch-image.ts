import type { LockId, LockMode, NodeId } from '@lockfabric/ports';
import type { FissPolicy } from '../agent-pool.js';
import type { RepairPlan } from './recovery-state.js';

/**
 * Register array names of the FissLock decider — the protocol's copy of the switch program's
 * contract (libs/switch FISSLOCK_ARRAYS; a protocol may not import the switch model, a test checks
 * both agree).
 */
export const DECIDER_ARRAYS = { seq: 'fisslock.seq', free: 'fisslock.free', rw: 'fisslock.rw', pref: 'fisslock.pref', mid: 'fisslock.mid', inca: 'fisslock.inca' } as const;

/** The decider's registers that do not start at 0 (every lock free), as a switch resets them. */
export const DECIDER_INITIAL_VALUES: Readonly<Record<string, number>> = { [DECIDER_ARRAYS.free]: 1 };

/**
 * Distance below a fenced machine's last accepted seq at which its window is set: every packet it
 * may still send (a retransmission of its unacknowledged window, or anything new) then lands in
 * the decider's gap range and is dropped, never decided.
 */
export const FENCE_WINDOW = 1 << 16;

/** One held lock as S3 writes it. */
export interface HeldLockImage {
  readonly lid: LockId;
  readonly mode: LockMode;
  readonly mid: NodeId;
  /** starvation-prevention: a writer waits behind shared holders; write-preferring: a writer waits. */
  readonly pref: boolean;
}

export interface SwitchImage {
  readonly held: readonly HeldLockImage[];
  /** seq[src] values: 0 for survivors (their links restart), a fence for failed machines. */
  readonly seq: readonly { readonly machine: NodeId; readonly value: number }[];
}

/**
 * S3 from the repaired agents (spec §7.2): each held lock becomes `free=0, rw=mode, mid=agent,
 * inca=0` with the policy bit from its queue; every other lock is free. Survivors' sequence windows
 * restart at 0 with their new links; a failed machine's window is set just out of its reach
 * (`lastSeq(machine) − FENCE_WINDOW`) so its late packets are dropped — the recovery fence, since
 * LockPacket has no epoch field.
 */
export function switchImage(plan: RepairPlan, policy: FissPolicy, lastSeq: (machine: NodeId) => number = () => 0): SwitchImage {
  const held = plan.agents.map((a) => ({
    lid: a.lid,
    mode: a.mode,
    mid: a.machine,
    pref:
      policy === 'write-preferring'
        ? a.wqueue.some((w) => w.mode === 'exclusive')
        : policy === 'starvation-prevention' && a.mode === 'shared' && a.wqueue.some((w) => w.mode === 'exclusive'),
  }));
  const seq = [
    ...plan.survivors.map((machine) => ({ machine, value: 0 })),
    ...plan.failed.map((machine) => ({ machine, value: (lastSeq(machine) - FENCE_WINDOW) >>> 0 })),
  ];
  return { held, seq };
}

/** The switch control plane as S3 needs it (SwitchControl gRPC in the live substrate, the Switch object in sim). */
export interface DeciderControl {
  readonly arrays: readonly string[];
  readRegister(array: string, index: number): number | Promise<number>;
  fill(array: string, value: number): void | Promise<void>;
  write(array: string, index: number, values: readonly number[]): void | Promise<void>;
}

/** Writes `image` through `control`: everything free first, then the held locks, then the seq windows. Returns registers written. */
export async function writeSwitchImage(control: DeciderControl, image: SwitchImage): Promise<number> {
  const has = (name: string): boolean => control.arrays.includes(name);
  for (const [array, value] of [
    [DECIDER_ARRAYS.free, 1],
    [DECIDER_ARRAYS.rw, 0],
    [DECIDER_ARRAYS.mid, 0],
    [DECIDER_ARRAYS.inca, 0],
    [DECIDER_ARRAYS.pref, 0],
  ] as const) {
    if (has(array)) await control.fill(array, value);
  }
  let written = 0;
  // a synchronous control plane (sim, in-process) is not awaited per register
  const write = async (array: string, index: number, value: number): Promise<void> => {
    written++;
    const done = control.write(array, index, [value]);
    if (done) await done;
  };
  const pref = has(DECIDER_ARRAYS.pref);
  for (const h of image.held) {
    const a = control.write(DECIDER_ARRAYS.free, h.lid, [0]);
    const b = control.write(DECIDER_ARRAYS.rw, h.lid, [h.mode === 'shared' ? 1 : 0]);
    const c = control.write(DECIDER_ARRAYS.mid, h.lid, [h.mid + 1]); // the switch keeps mid + 1 so 0 means none
    written += 3;
    if (a || b || c) await Promise.all([a, b, c]);
    if (h.pref && pref) await write(DECIDER_ARRAYS.pref, h.lid, 1);
  }
  for (const s of image.seq) await write(DECIDER_ARRAYS.seq, s.machine % 256, s.value);
  return written;
}
