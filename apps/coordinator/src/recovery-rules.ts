import type { ProtocolId } from '@lockfabric/ports';

/**
 * How the locks a failed member held become usable again, per protocol (README, "Recovery per
 * protocol"). The coordinator keeps the books; for lease-based recovery the protocol's own waiters
 * do the work, and the coordinator only knows by when it must be over.
 *
 * - `lease`: waiters reclaim the lock once the holder's lease (or stall threshold) has run out;
 *   the action is done at detection + `boundMs`.
 * - `await-restart`: nothing can be repaired until the member comes back (a memory node's table,
 *   a switch's registers); done when it rejoins with a higher incarnation.
 * - `none`: the design has no way to take a dead holder's lock back safely; the lock stays held
 *   until a reset between runs. Recorded so Status says so instead of pretending.
 */
export type RecoveryMechanism = 'lease' | 'await-restart' | 'none';

export interface RecoveryRule {
  readonly mechanism: RecoveryMechanism;
  /** For `lease`: the longest the protocol needs with its default options, in ms. */
  readonly boundMs?: number;
  readonly action: string;
}

/** What a compute-node (lock client) failure means for each protocol's locks. */
export const COMPUTE_FAILURE_RULES: Readonly<Record<ProtocolId, RecoveryRule>> = {
  caslock: { mechanism: 'none', action: 'word holds the dead holder id; no lease, a late WRITE 0 from a paused holder could free a later holder' },
  // DSLR: waiters skip tickets whose counters stalled for 2λ, polling at most every λ/2 (λ = 10 ms).
  dslr: { mechanism: 'lease', boundMs: 25, action: 'waiters skip stalled tickets after 2λ; late release fenced by LeaseExpiredError' },
  'dslr-backoff': { mechanism: 'lease', boundMs: 25, action: 'as dslr' },
  mcs: { mechanism: 'none', action: 'queue handover needs the dead successor or holder; queue blocked' },
  // DrTM read leases last λ + Δ (1 ms + 50 µs); write locks carry no lease.
  drtm: { mechanism: 'lease', boundMs: 1.05, action: 'read leases expire after λ+Δ; write locks of a dead writer stay held (no lease)' },
  // ShiftLock: RelCnt watching fires after 3·T_lease, then an era-fenced reset through the memory node.
  shiftlock: { mechanism: 'lease', boundMs: 30, action: 'RelCnt watch (3·T_lease) then era-fenced reset by the memory-node recovery server' },
  // DecLock: a waiter that times out (10 ms + stagger) resets the lock, fenced by the reset counter.
  declock: { mechanism: 'lease', boundMs: 12, action: 'waiter timeout triggers a lock reset fenced by the reset counter' },
  'declock-cql': { mechanism: 'lease', boundMs: 12, action: 'as declock' },
  alock: { mechanism: 'none', action: 'cohort queues need the dead holder; queue blocked' },
  fisslock: { mechanism: 'none', action: 'S1–S3 (agents of the failed server expire, pending acquires abort) are not yet driven by this coordinator' },
  netlock: { mechanism: 'none', action: 'switch queue entry of the dead client is not reclaimed' },
  srvlock: { mechanism: 'none', action: 'lock server keeps the dead client as holder' },
  parlock: { mechanism: 'none', action: 'lock server keeps the dead client as holder' },
  redlock: { mechanism: 'lease', boundMs: 10_000, action: 'key TTL expires' },
};

/** Which protocols lose state when a member of `role` fails, and how it comes back. */
export function rulesFor(role: string): ReadonlyMap<string, RecoveryRule> {
  switch (role) {
    case 'compute':
      return new Map(Object.entries(COMPUTE_FAILURE_RULES));
    case 'memory':
      // The table is gone with the process; whoever restarts it must zero it before use.
      return new Map([['*', { mechanism: 'await-restart', action: 'lock table lost; re-initialise (zero) it before use' } as const]]);
    case 'switch':
      return new Map<string, RecoveryRule>([
        ['fisslock', { mechanism: 'await-restart', action: 'S1 pause and gather agent states, S2 repair, S3 rebuild switch registers' }],
        ['netlock', { mechanism: 'await-restart', action: 'switch queues lost; rebuild from clients' }],
      ]);
    default:
      return new Map();
  }
}
