import type { LockPacket, NodeId } from '@lockfabric/ports';
import { FLAG_DUP, FLAG_GRANTED } from '../wire.js';
import type { Agent } from './agent.js';
import { holderKey } from './agent.js';

/**
 * A request (one task's ACQUIRE) may exist as several copies: the client's ACQUIRE, the copies
 * machines bounce on (each sequenced on the bouncer's link), and retransmissions of those. These
 * two rules keep the copies of one request from being counted twice (issue 4: lock stuck under
 * contention, no faults).
 */

/**
 * Outstanding packets of `machine`'s link that a switch (①/②) GRANT answers: every ACQUIRE copy of
 * the granted task this machine still waits an ACK for — the client's own, and a copy this machine
 * bounced itself. The switch sends no separate ACK when a copy's sender is the requester (the GRANT
 * is its ACK), but the client only acknowledges its own ACQUIRE's seq, so a self-bounced copy stayed
 * outstanding, and each RTO go-back-N resent it with every later packet of the link: DUP copies of
 * requests that had been granted already, which the decider routes to the agent and the agent
 * queues as waiters that never wait. The GRANT proves the switch took those seqs in order (the copy
 * it decided is one of them or came after them), so acknowledging them cannot open a seq gap.
 */
export function answeredBySwitchGrant(machine: NodeId, grant: LockPacket): (q: LockPacket) => boolean {
  return (q) => q.type === 'acquire' && q.lock === grant.lock && q.task === grant.task && q.machine === machine && (q.flags & (FLAG_DUP | FLAG_GRANTED)) === 0;
}

/**
 * A ② GRANTED copy (or the RELEASE of a ② holder, flagged GRANTED) names a task that holds the lock,
 * so a wait-queue entry of that task is a ghost left by a DUP copy of its request: it is dropped,
 * and the caller then counts the copy as a holder (inca + 1) or waits for it as usual. Answering the
 * copy "duplicate" because of the ghost left the agent one ② grant behind the decider's inca for
 * good — the holder's RELEASE then removed the ghost as if an aborted waiter — so every FREE and
 * transfer of the lock was refused and its waiters timed out (seed 8 of the FissLock benchmark).
 * Returns whether a ghost was dropped.
 */
export function dropGhostWaiter(a: Agent, p: LockPacket): boolean {
  if ((p.flags & FLAG_GRANTED) === 0) return false;
  const k = holderKey(p.machine, p.task);
  const at = a.wqueue.findIndex((w) => holderKey(w.mid, w.task) === k);
  if (at < 0) return false;
  a.wqueue.splice(at, 1);
  return true;
}
