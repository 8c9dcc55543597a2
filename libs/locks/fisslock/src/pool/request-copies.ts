import type { LockPacket, NodeId } from '@lockfabric/ports';
import { FLAG_DUP, FLAG_GRANTED } from '../wire.js';

/**
 * A request (one task's ACQUIRE) may exist as several copies: the client's ACQUIRE, the copies
 * machines bounce on (each sequenced on the bouncer's link), and retransmissions of those. The rule
 * below keeps a granted request's copies from being resent for ever (once a lock stuck under
 * contention, no faults); the agent's onAcquire/onRelease keep a ② copy and a DUP copy of one
 * request from being counted twice (a ghost waiter turned into the holder it is).
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
