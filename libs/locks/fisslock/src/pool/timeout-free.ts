import type { LockId } from '@lockfabric/ports';
import { FLAG_ABORT, FLAG_BOUNCED, FLAG_DUP, FLAG_GRANTED, FLAG_REACHED } from '../wire.js';
import type { PoolInternals } from './pool-internals.js';

// Where a client's abort goes (spec §5.2): the switch's timeout-free frees whatever lifetime has
// mid = this machine and inca 0, so an abort takes it only when no other lifetime of this machine
// can be the one it frees. AgentPool.otherInterest / timeoutFreeUnsafe call these.

/**
 * Whether this machine has, or may be about to receive, an agent for `lid` that is not `task`'s
 * own lost ① grant: a live or pending agent, a transfer waiting for its entries, or another local
 * task still expecting a GRANT for the lock. The switch's timeout-free rule (§5.2) frees a lock
 * whose agent machine sends an unreached abort, so such an abort must go to the agent instead.
 */
export function otherInterest(pool: PoolInternals, lid: LockId, task: number): boolean {
  if (pool.states.has(lid) || pool.transfers.hasGrantFor(lid)) return true;
  for (const [t, listener] of pool.listeners) if (t !== task && listener.lock === lid) return true;
  return timeoutFreeUnsafe(pool, lid, task);
}

/**
 * Whether an abort of `task` for `lid` sent now must not take the switch's timeout-free (§5.2),
 * which frees whatever lifetime has mid = this machine and inca 0: the decider cannot tell two
 * tasks of one machine apart (18 bits per lock). The link is FIFO into the switch, so two kinds
 * of packet still unanswered on it are decided first and may put another lifetime there:
 * - an ACQUIRE of another local task (the client's, or a copy this machine bounced; DUP and
 *   GRANTED copies are only routed) that may find the lock free: its ① grant would be the
 *   lifetime freed, while its agent lives on here and its later FREE frees the lock again under
 *   the next holder (both-links sweep at 10 %, seeds 8, 2, 100; 2 %, seed 95). A copy cannot find
 *   the lock free if the switch routed one of this machine's packets back here after the last
 *   ender before it (LifetimeMarks); without that exemption, exclusive copies circling a lock
 *   orphaned here (① GRANT lost, ② holders since) kept the repairing abort from ever being sent;
 * - another abort-only RELEASE of the lock: one timeout-free per lock at a time. Two of them
 *   behind an ingress gap freed the orphan and then a transfer to a local task accepted between
 *   them (seed 56), or had two refusals rebuild an agent twice (seeds 393, 500).
 * While this holds the abort goes to the agent (REACHED) and circles; once the packet is answered
 * (a ① GRANT installs the agent here, which then takes the abort) the timeout-free may go.
 * Packets sent after the abort are decided after it and cannot be taken for the lifetime it ends.
 */
export function timeoutFreeUnsafe(pool: PoolInternals, lid: LockId, task: number): boolean {
  // entries of a transfer to this machine that came lately without their GRANT: the decider may
  // have accepted it, its GRANT copy lost (the reissue's seed-109 guard, for the client's abort
  // too: FAULTS_10 wide seed 202 freed such a lifetime through a refused abort's empty agent)
  if (pool.transfers.hasEntriesFor(lid, pool.clock.nowNs() - pool.stuck.afterNs)) return true;
  return pool.link.someOutstanding(
    (q) =>
      q.lock === lid &&
      q.machine === pool.machine &&
      ((q.type === 'acquire' && q.task !== task && (q.flags & (FLAG_DUP | FLAG_GRANTED)) === 0 && pool.marks.mayFindFree(lid, q.seq)) ||
        (q.type === 'release' && (q.flags & (FLAG_ABORT | FLAG_REACHED | FLAG_BOUNCED | FLAG_DUP)) === FLAG_ABORT)),
  );
}
