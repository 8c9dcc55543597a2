import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { FailureNoticeSchema, decodeWire } from '@lockfabric/wire';
import { errorMessage } from '@lockfabric/ports';

/** A member the coordinator declared dead during a run (its FailureNotice). */
export interface DeclaredDead {
  readonly role: string;
  readonly node: number;
  /** When the coordinator declared it (the histories' time base). */
  readonly atNs: number;
  readonly reason: string;
}

/** Listens for the coordinator's failure notices while a run goes on. */
export interface FailureNoticeWatch {
  readonly notices: readonly DeclaredDead[];
  /** Set when the watch could not listen (no NATS): fence clipping is then off for the run. */
  readonly unavailable?: string;
  close(): Promise<void>;
}

/** How many notices one run keeps (a flapping member cannot grow the list without bound). */
const MAX_NOTICES = 1_024;

/**
 * Follows `recovery.failure` on the cluster's NATS. A paused or cut-off compute node is declared
 * dead and fenced, then goes on when it resumes: the driver needs the time of that declaration to
 * judge its late releases (clipFencedHolds). Malformed notices are skipped.
 */
export async function watchFailureNotices(natsUrl: string | undefined, cluster: string): Promise<FailureNoticeWatch> {
  if (!natsUrl) return { notices: [], unavailable: 'no NATS URL in the cluster state', close: async () => undefined };
  let nc: Awaited<ReturnType<typeof connectNats>>;
  try {
    nc = await connectNats({ servers: natsUrl, name: 'lockfabric-driver-notices', logger: silentLogger });
  } catch (error) {
    return { notices: [], unavailable: `NATS at ${natsUrl}: ${errorMessage(error)}`, close: async () => undefined };
  }
  const notices: DeclaredDead[] = [];
  nc.subscribe(createSubjects(cluster).recovery('failure'), {
    callback: (error, msg) => {
      if (error || notices.length >= MAX_NOTICES) return;
      try {
        const notice = decodeWire(FailureNoticeSchema, msg.data, 'failure notice');
        notices.push({ role: notice.role, node: notice.node, atNs: Number(notice.timeNs), reason: notice.reason });
      } catch {
        // Not a notice: nothing to learn from it.
      }
    },
  });
  await nc.flush().catch(() => undefined);
  return { notices, close: () => nc.close().catch(() => undefined) };
}
