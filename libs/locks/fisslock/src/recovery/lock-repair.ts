import type { Clock, LockId, Span, Trace } from '@lockfabric/ports';
import type { AgentPool, FissPolicy } from '../agent-pool.js';
import { checkRepairPlan } from './invariants.js';
import { requestKey } from './recovery-state.js';
import type { RepairPlan, ServerReport } from './recovery-state.js';
import { ordersFor, repairLockState } from './repair.js';
import { DECIDER_ARRAYS, switchImage } from './switch-image.js';
import type { DeciderControl, HeldLockImage } from './switch-image.js';

export interface LockRepairParams {
  readonly lid: LockId;
  /** Every machine's agent pool (a per-lock repair has no failed machine). */
  readonly pools: readonly AgentPool[];
  readonly control: DeciderControl;
  readonly policy: FissPolicy;
  readonly clock: Clock;
  /** The drain ends once no machine has an unacknowledged packet of the lock and none of it arrived for this long (longer than any delay the links add). */
  readonly quietNs: number;
  /** How often the drain looks (default quietNs / 2). */
  readonly pollNs?: number;
  /** The drain gives up after this long and repairs anyway (a machine that never answers; default 1 000 × quietNs). */
  readonly maxDrainNs?: number;
  readonly trace?: Trace;
}

export interface LockRepairOutcome {
  readonly lid: LockId;
  readonly plan: RepairPlan;
  /** What S3 wrote for the lock: its held image, or undefined (written free). */
  readonly held: HeldLockImage | undefined;
  readonly reports: readonly ServerReport[];
  /** The drain ended quiet (false: it ran out of `maxDrainNs`). */
  readonly drained: boolean;
  readonly drainNs: number;
  readonly problems: readonly string[];
}

/**
 * Spec §12.9: S1–S3 for one lock, in process (sim; the live coordinator would drive the same pool
 * hooks over NATS). Every machine quarantines the lock — nothing of it is sent, arrivals are
 * acknowledged and dropped — until no packet of it is in flight; then, in one turn, S1 collects
 * that lock's agents and client records, S2 decides with `repairLockState` (no failed machine),
 * S3 writes the lock's decider registers (free/r-w/mid/inca/pref at index `lid`; the seq windows
 * stay), and each machine installs its part and ends the quarantine. Why the drain is the fence
 * (no packet field carries a repair epoch): recovery/README.md "Per-lock repair".
 */
export async function repairLockInProcess(params: LockRepairParams): Promise<LockRepairOutcome> {
  const { lid, pools, clock } = params;
  const span: Span | undefined = params.trace?.startSpan('recovery.lock', { attributes: { 'lockfabric.protocol': 'fisslock', 'lockfabric.lock.id': lid } });
  const t0 = clock.nowNs();
  for (const pool of pools) pool.quarantineLock(lid);
  const pollNs = params.pollNs ?? Math.max(1, Math.floor(params.quietNs / 2));
  const maxDrainNs = params.maxDrainNs ?? 1_000 * params.quietNs;
  let drained = false;
  for (;;) {
    await clock.sleep(pollNs);
    const now = clock.nowNs();
    drained = pools.every((pool) => {
      const q = pool.quarantineState(lid);
      return q.unacked === 0 && now - q.lastArrivalNs >= params.quietNs;
    });
    if (drained || now - t0 >= maxDrainNs) break;
  }
  // S1–S3 in one turn: nothing of the lock moves in between
  const reports = pools.map((pool) => pool.lockReport(lid));
  const input = { failed: [], reports };
  const plan = repairLockState(input);
  const image = switchImage(plan, params.policy);
  const held = image.held.find((h) => h.lid === lid);
  const written = writeLockImage(params.control, lid, held);
  if (written) await written;
  for (const pool of pools) pool.applyLockRepair(lid, ordersFor(plan, pool.machine));
  const problems = checkRepairPlan(input, plan, { held: image.held, seq: [] });
  span?.setAttribute('lockfabric.recovery.held', held ? 1 : 0);
  span?.setAttribute('lockfabric.recovery.problems', problems.length);
  span?.end();
  return { lid, plan, held, reports, drained, drainNs: clock.nowNs() - t0, problems };
}

/**
 * Whether S1 reports of one lock (taken without a quarantine: a hint, not a decision) show it
 * stuck: an agent with no holder, or a holder that no client holds or waits for. A lock whose
 * holders all belong to live clients is merely held long, and is left alone.
 */
export function lockLooksStuck(reports: readonly ServerReport[]): boolean {
  const known = new Set(reports.flatMap((r) => r.clients.filter((c) => c.state !== 'aborting').map((c) => requestKey(c))));
  const agents = reports.flatMap((r) => r.agents.filter((a) => a.state === 'live'));
  return agents.some((a) => a.holders.length === 0 || a.holders.some((h) => !known.has(requestKey(h))));
}

/** S3 for one lock: its five registers (the policy bit only where the program has it); undefined when the control plane is synchronous. */
export function writeLockImage(control: DeciderControl, lid: LockId, held: HeldLockImage | undefined): Promise<unknown> | undefined {
  const values: [string, number][] = [
    [DECIDER_ARRAYS.free, held ? 0 : 1],
    [DECIDER_ARRAYS.rw, held?.mode === 'shared' ? 1 : 0],
    [DECIDER_ARRAYS.mid, held ? held.mid + 1 : 0], // the switch keeps mid + 1 so 0 means none
    [DECIDER_ARRAYS.inca, 0],
  ];
  if (control.arrays.includes(DECIDER_ARRAYS.pref)) values.push([DECIDER_ARRAYS.pref, held?.pref ? 1 : 0]);
  const pending = values.map(([array, value]) => control.write(array, lid, [value])).filter((r): r is Promise<void> => r instanceof Promise);
  return pending.length > 0 ? Promise.all(pending) : undefined;
}
