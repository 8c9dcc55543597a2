import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger, Subjects } from '@lockfabric/live';
import { fenceMachine } from '@lockfabric/lock-fisslock';
import type { AgentPool } from '@lockfabric/lock-fisslock';
import type { NodeId } from '@lockfabric/ports';
import { FailureNoticeSchema, decodeWire } from '@lockfabric/wire';

export interface FissSelfFenceDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly node: NodeId;
  /** This node's FissLock agent pool now, if it runs one. */
  readonly pool: () => AgentPool | undefined;
  readonly logger: Logger;
}

export interface FissSelfFence {
  /** Clients cut off so far (one fence per run: a later run starts a new pool). */
  readonly fencedClients: number;
  close(): void;
}

/**
 * A compute node that hears it was declared dead (a FailureNotice on `ctl.recovery.failure` naming
 * itself: it was paused past detection or cut off, and the coordinator recovered FissLock without
 * it) fences its own FissLock run (spec §7.1: its holds expired, its pending acquires aborted):
 * the agent pool stops and every client is abandoned — waiting acquires end with
 * LockAbortedError, later ones fail at once with it, releases of older holds report
 * LeaseExpiredError. The switch already drops its packets (its seq window is fenced in S3); this
 * makes the node's own clients see typed errors instead of timeouts. Other notices are the
 * failure feed's business; bytes that are no FailureNotice are counted there, not here.
 */
export function startFissSelfFence(deps: FissSelfFenceDeps): FissSelfFence {
  const subject = deps.subjects.recovery('failure');
  let fencedClients = 0;
  const subscription: Subscription = deps.nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) return;
      let notice;
      try {
        notice = decodeWire(FailureNoticeSchema, msg.data, subject);
      } catch {
        return; // counted by the failure feed, which reads the same subject
      }
      if (notice.role !== 'compute' || (notice.node !== deps.node && notice.id !== String(deps.node))) return;
      const pool = deps.pool();
      if (!pool) return;
      const reason = `compute node ${deps.node} was declared failed (epoch ${notice.epoch}); its FissLock holds expired`;
      const cut = fenceMachine(pool, reason);
      if (cut > 0) deps.logger.warn(`fisslock: ${reason}: ${cut} clients cut off, agent pool stopped`);
      fencedClients += cut;
    },
  });
  return {
    get fencedClients() {
      return fencedClients;
    },
    close: () => subscription.unsubscribe(),
  };
}
