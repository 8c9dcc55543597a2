import type { HistoryRecorder } from '@lockfabric/check';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { NS_PER_MS, clientKey } from '@lockfabric/ports';
import type { ClientPorts } from '@lockfabric/ports';
import { errorName } from '@lockfabric/workloads';

/** The liveness phase after faults heal: every lock must be acquirable again within a budget. */
export interface HealSpec {
  /** Virtual time from the start of the probe by which every lock must have been acquired once. */
  readonly budgetMs: number;
  /**
   * Timeout of each probe acquire, retried until the budget is spent; default the whole remaining
   * budget (one patient waiter, so a protocol's own waiter-timeout recovery gets to run).
   */
  readonly attemptTimeoutMs?: number;
}

export interface HealOutcome {
  /** When the probe started (faults off, workload over), clock of the run. */
  readonly startedAtNs: number;
  /** Locks acquired and released by the probe, and how long after its start each was granted. */
  readonly grantedAfterNs: ReadonlyMap<number, number>;
  /** Locks the probe could not acquire within the budget. */
  readonly stuck: readonly number[];
  /** Probe acquires that failed and were retried, by error name. */
  readonly retriesByError: Readonly<Record<string, number>>;
}

/**
 * Acquires every lock `0 … locks-1` once, exclusively, from one fresh client on a surviving node,
 * in order, retrying failed attempts until the budget is spent (a crashed holder may need a
 * protocol's lease, timeout or repair to pass first). Each step goes into the run's history, so
 * the exclusion check covers the probe as well.
 */
export async function healProbe(
  protocol: ProtocolDefinition,
  protocolOptions: ProtocolOptions | undefined,
  ports: ClientPorts,
  locks: number,
  recorder: HistoryRecorder,
  heal: HealSpec,
): Promise<HealOutcome> {
  const client = protocol.createClient(ports, protocolOptions);
  const { clock } = ports;
  const self = clientKey(ports.self);
  const startedAtNs = clock.nowNs();
  const deadlineNs = startedAtNs + heal.budgetMs * NS_PER_MS;
  const grantedAfterNs = new Map<number, number>();
  const stuck: number[] = [];
  const retriesByError: Record<string, number> = {};
  for (let lock = 0; lock < locks; lock++) {
    let granted = false;
    while (!granted && clock.nowNs() < deadlineNs) {
      const leftMs = (deadlineNs - clock.nowNs()) / NS_PER_MS;
      const timeoutMs = Math.min(heal.attemptTimeoutMs ?? leftMs, leftMs);
      recorder.invoke(self, 'acquire', lock, 'exclusive', clock.nowNs());
      try {
        const grant = await client.acquire(lock, 'exclusive', { timeoutMs });
        recorder.ok(self, 'acquire', lock, 'exclusive', clock.nowNs());
        grantedAfterNs.set(lock, clock.nowNs() - startedAtNs);
        granted = true;
        recorder.invoke(self, 'release', lock, 'exclusive', clock.nowNs());
        try {
          await client.release(grant);
          recorder.ok(self, 'release', lock, 'exclusive', clock.nowNs());
        } catch (error) {
          recorder.fail(self, 'release', lock, 'exclusive', clock.nowNs(), errorName(error));
        }
      } catch (error) {
        const name = errorName(error);
        recorder.fail(self, 'acquire', lock, 'exclusive', clock.nowNs(), name);
        retriesByError[name] = (retriesByError[name] ?? 0) + 1;
        // A failure that returns at once (a fenced or unreachable table) must not spin the simulator.
        await clock.sleep(Math.min(leftMs, 1) * NS_PER_MS * 0.1);
      }
    }
    if (!granted) stuck.push(lock);
  }
  return { startedAtNs, grantedAfterNs, stuck, retriesByError };
}
