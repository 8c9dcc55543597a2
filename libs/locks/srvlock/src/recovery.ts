import type { LockId, NodeId } from '@lockfabric/ports';
import type { LockRequest, LockTable } from './lock-table.js';

/**
 * Recovery hook for a lock server (srvlock, parlock, NetLock's server part) after the coordinator
 * declared compute node `dead` failed (FailureNotice): every hold and queued request of that
 * machine on `locks` is dropped, and the survivors' requests granted as a result are returned for
 * the server to answer. A request of the dead machine that gets granted along the way (it was
 * queued behind one of its own) is dropped too, so nothing is ever granted to the dead machine.
 *
 * Fencing: the server must also refuse requests from the dead machine's incarnation after the
 * notice (a paused client that resumes), or a late acquire would be granted to a node that is
 * being recovered. The table has no incarnation; the caller checks it before `acquire`.
 */
export function dropDeadMachine(table: LockTable, dead: NodeId, locks: Iterable<LockId>): LockRequest[] {
  const granted: LockRequest[] = [];
  for (const lock of locks) {
    let pending = [...table.holders(lock), ...table.waiters(lock)].filter((r) => r.machine === dead);
    while (pending.length > 0) {
      const next: LockRequest[] = [];
      for (const request of pending) {
        for (const g of table.release(lock, request.machine, request.task, request.rid)) {
          if (g.machine === dead) next.push(g);
          else granted.push(g);
        }
      }
      pending = next;
    }
  }
  return granted;
}
