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
 * - `fence`: the memory node fences the dead node (its verbs complete `bad-rkey`, "fenced: …")
 *   and only then frees the words it held; done when a memory node reports it on
 *   `ctl.recovery.phase` (normally within a few ms of detection).
 * - `driven`: the coordinator runs the protocol's recovery steps itself (FissLock S1–S3, NetLock's
 *   switch-queue purge); done when they end (or when it finds the protocol not in use).
 * - `none`: the design has no way to take a dead holder's lock back safely; the lock stays held
 *   until a reset between runs. Recorded so Status says so instead of pretending.
 */
export type RecoveryMechanism = 'lease' | 'await-restart' | 'fence' | 'driven' | 'none';

export interface RecoveryRule {
  readonly mechanism: RecoveryMechanism;
  /** For `lease`: the longest the protocol needs with its default options, in ms. */
  readonly boundMs?: number;
  readonly action: string;
}

/** What a compute-node (lock client) failure means for each protocol's locks. */
export const COMPUTE_FAILURE_RULES: Readonly<Record<ProtocolId, RecoveryRule>> = {
  // The word names the holder's node: once the memory node refuses the dead node's verbs, freeing it is safe.
  caslock: { mechanism: 'fence', action: 'memory node fences the dead node, then CASes its holder tags to free (rw: dead writer field cleared; anonymous reader counts stay)' },
  // DSLR: waiters skip tickets whose counters stalled for 2λ, polling at most every λ/2 (λ = 10 ms).
  dslr: { mechanism: 'lease', boundMs: 25, action: 'waiters skip stalled tickets after 2λ; late release fenced by LeaseExpiredError' },
  'dslr-backoff': { mechanism: 'lease', boundMs: 25, action: 'as dslr' },
  mcs: { mechanism: 'driven', action: 'coordinator gates every survivor (no new enqueues), waits until no survivor holds (a hand-over to the dead node counts as done), has each survivor abort its waiters (LockAbortedError), zeroes the lock table through one survivor, resumes — over ctl.queue.<node>.<verb>; a dead successor that never linked is cut by the releaser after releaseLinkTimeoutNs' },
  // DrTM read leases last λ + Δ (1 ms + 50 µs) and run out; write words name the owner machine.
  drtm: { mechanism: 'fence', action: 'read leases expire after λ+Δ; write locks owned by the dead machine are freed by the memory node after fencing it' },
  // ShiftLock: RelCnt watching fires after 3·T_lease, then an era-fenced reset through the memory node.
  shiftlock: { mechanism: 'lease', boundMs: 30, action: 'RelCnt watch (3·T_lease) then era-fenced reset by the memory-node recovery server' },
  // DecLock: a waiter that times out (acquireTimeoutNs 10 ms + stagger ≤ 15 ms) resets the lock, fenced by
  // the reset counter. The compute nodes' declock service hears this FailureNotice too: a reset
  // stops waiting for the dead node's queue members once every live node has acknowledged, and a
  // reset the dead node had claimed is taken over. So the action is done by the notice, or one
  // waiter timeout (+ an ack round trip) after it for a lock nobody waited on yet.
  declock: { mechanism: 'lease', boundMs: 30, action: 'waiter timeout triggers a lock reset fenced by the reset counter; on the FailureNotice the reset stops waiting for the dead node (live nodes acknowledge with RESET_ACK) and a reset the dead node had claimed is taken over' },
  'declock-cql': { mechanism: 'lease', boundMs: 30, action: 'as declock' },
  alock: { mechanism: 'driven', action: 'as mcs: gate, drain, abort, reset of both cohort tails and victim, resume; a dead successor is cut by the releaser as in mcs' },
  fisslock: { mechanism: 'driven', action: 'coordinator runs S1 (pause survivors, gather agents and clients), S2 (repair: the dead server\'s holds and queue entries dropped, its agents rebuilt on survivors), S3 (switch registers rewritten, the dead machine\'s seq window fenced) over ctl.fiss.<node>.<verb>' },
  // NetLock: the coordinator purges the dead node's switch-queue entries (netlock-purge.ts); done when the switch answers.
  netlock: { mechanism: 'driven', action: 'hot locks (switch queues): the coordinator calls SwitchControl.PurgeNetLockMachine, which fences the dead machine in the switch and removes its queue entries, granting the waiters behind them; cold locks: the lock server drops the dead node\'s holds and queued requests on the FailureNotice and fences it, as srvlock' },
  // The lock servers act on the FailureNotice itself (within ms); they send no report, so the book
  // counts the action done a small bound after detection.
  srvlock: { mechanism: 'lease', boundMs: 10, action: 'the lock server drops the dead node\'s holds and queued requests on the FailureNotice, grants the survivors behind them, and ignores the dead node\'s later requests (fenced for the run); if the dead node was the server, the next live node takes over after a grace that reclaims the survivors\' holds' },
  parlock: { mechanism: 'lease', boundMs: 10, action: 'every surviving partition manager drops the dead node\'s holds and queued requests on the FailureNotice and fences it, as srvlock; locks homed on the dead node move to the next live node, which serves them after a grace that reclaims the survivors\' holds' },
  redlock: { mechanism: 'lease', boundMs: 10_000, action: 'key TTL expires' },
  // One-sided baselines without leases or repair (their READMEs, "Failures").
  'rma-rw': { mechanism: 'none', action: 'a dead writer keeps the MCS queue and the writer flag, a dead reader its arrival; locks stay held until a reset between runs' },
  ncosed: { mechanism: 'none', action: 'a dead exclusive holder keeps the tail and its queued requesters wait; a dead reader its count; held until a reset between runs' },
  sherman: { mechanism: 'none', action: 'a dead node keeps the CAS words its clients held; held until a reset between runs' },
  // Memory-node CPU managers: on sim/embedded the manager acts on the FailureNotice as srvlock; the
  // live memory node does not pass notices to protocol services yet, so there the holds stay.
  rpc: { mechanism: 'none', action: 'live: the memory-node manager keeps the dead node\'s holds (waiters time out); sim/embedded: dropped on the FailureNotice, as srvlock' },
  traditional: { mechanism: 'none', action: 'as rpc (holds and queued requests)' },
  'traditional-ro': { mechanism: 'none', action: 'as rpc (holds and queued requests)' },
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
        ['fisslock', { mechanism: 'await-restart', action: 'S0 restart; once it is back the coordinator runs S1 pause and gather agent states, S2 repair, S3 rebuild switch registers, then resumes the servers' }],
        ['netlock', { mechanism: 'await-restart', action: 'switch queues lost; rebuild from clients' }],
      ]);
    default:
      return new Map();
  }
}
