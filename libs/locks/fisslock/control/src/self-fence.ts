import type { ControlBus, Logger, Subjects } from '@lockfabric/control';
import { fenceMachine } from '@lockfabric/lock-fisslock';
import type { AgentPool } from '@lockfabric/lock-fisslock';
import type { NodeId } from '@lockfabric/ports';
import { FailureNoticeSchema, decodeWire } from '@lockfabric/wire';

export interface FissSelfFenceDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  readonly node: NodeId;
  /** This node's FissLock agent pool now, if it runs one. */
  readonly pool: () => AgentPool | undefined;
  readonly logger: Logger;
}

export interface FissSelfFence {
  /** Clients cut off so far (one fence per run: a later run starts a new pool). */
  readonly fencedClients: number;
  /**
   * Fences now, for a caller that learned of the death another way (a membership view naming this
   * node's incarnation dead reaches the rejoin watch before the FailureNotice reaches this fence,
   * and the rejoin retires the run: fence first, so the waits end typed rather than cut off).
   */
  fence(why: string): void;
  close(): void;
}

/**
 * A compute node that hears it was declared dead (a FailureNotice on `ctl.recovery.failure` naming
 * itself: it was paused past detection or cut off, and the coordinator recovered FissLock without
 * it) fences its own FissLock run (FissLock §7.1: its holds expired, its pending acquires aborted):
 * the agent pool stops and every client is abandoned — waiting acquires end with
 * LockAbortedError, later ones fail at once with it, releases of older holds report
 * LeaseExpiredError. The switch already drops its packets (its seq window is fenced in S3); this
 * makes the node's own clients see typed errors instead of timeouts. Other notices are the
 * failure feed's business; bytes that are no FailureNotice are counted there, not here.
 */
export function startFissSelfFence(deps: FissSelfFenceDeps): FissSelfFence {
  const subject = deps.subjects.recovery('failure');
  let fencedClients = 0;
  const fence = (why: string) => {
    const pool = deps.pool();
    if (!pool) return;
    const reason = `compute node ${deps.node} was declared failed (${why}); its FissLock holds expired`;
    const cut = fenceMachine(pool, reason);
    if (cut > 0) deps.logger.warn(`fisslock: ${reason}: ${cut} clients cut off, agent pool stopped`);
    fencedClients += cut;
  };
  const unsubscribe = deps.bus.subscribe(subject, (msg) => {
    let notice;
    try {
      notice = decodeWire(FailureNoticeSchema, msg.data, subject);
    } catch {
      return; // counted by the failure feed, which reads the same subject
    }
    if (notice.role !== 'compute' || (notice.node !== deps.node && notice.id !== String(deps.node))) return;
    fence(`epoch ${notice.epoch}`);
  });
  return {
    get fencedClients() {
      return fencedClients;
    },
    fence,
    close: () => unsubscribe(),
  };
}
