// Shared pieces of the live chaos tests (not a test file itself).
import type { HistoryEvent } from '@lockfabric/check';
import { RealClock } from '@lockfabric/realtime';
import type { ProcessRecord } from '@lockfabric/workload-driver';

const serviceClock = new RealClock();

/** Now on the services' clock: the same RealClock (one machine-wide time base), so test times compare with history times. */
export function liveNowNs(): number {
  return serviceClock.nowNs();
}

export const MS = 1_000_000;

/** DSLR with leases sized for the emulated fabric (as in live-protocols), restarting skipped tickets. */
export const DSLR_LEASE_MS = 200;
export const dslrLiveOptions = { leaseNs: String(DSLR_LEASE_MS * MS), waitUnitNs: '100000', restartOnAbort: 'true' };

/** Failure detection of the local cluster's services: heartbeats every 100 ms, dead after 3 misses. */
export const DETECTION_MS = 300;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The sum of a Prometheus metric's samples (all label sets) from a service's /metrics. */
export async function metric(process: ProcessRecord, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${process.health}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

export function nodeOf(event: HistoryEvent): number {
  return Number(event.client.split('/')[0]);
}

/**
 * For each lock, the acquire grants (`ok`) at or after `fromNs`, in time order: how soon and how
 * regularly survivors got the lock after a failure.
 */
export function grantsAfter(history: readonly HistoryEvent[], fromNs: number): Map<number, number[]> {
  const grants = new Map<number, number[]>();
  for (const e of history) {
    if (e.op !== 'acquire' || e.phase !== 'ok' || e.timeNs < fromNs) continue;
    const list = grants.get(e.lock) ?? [];
    list.push(e.timeNs);
    grants.set(e.lock, list);
  }
  for (const list of grants.values()) list.sort((a, b) => a - b);
  return grants;
}

/** The longest stretch from `fromNs` (or from a grant) to the next grant of the same lock. */
export function longestGrantGapNs(grants: readonly number[], fromNs: number): number {
  let longest = 0;
  let previous = fromNs;
  for (const t of grants) {
    longest = Math.max(longest, t - previous);
    previous = t;
  }
  return longest;
}

/**
 * Waits until the cluster's switch admits epoch-stamped packets: the coordinator's first sight of it
 * is over. The driver starts a switch-family run only then, so a test that injects a fault a fixed
 * time after starting its run must wait for this first, or the fault may land before the run began.
 */
export async function switchOpened(cluster: { readonly processes: readonly ProcessRecord[] }, timeoutMs = 30_000): Promise<void> {
  const sw = cluster.processes.find((p) => p.role === 'switch');
  if (!sw) throw new Error('the cluster has no switch');
  await waitFor(async () => (await metric(sw, 'lockfabric_switch_admission_open').catch(() => 0)) === 1, timeoutMs, 'the coordinator to open the switch (its first sight)');
}

/** Polls `condition` until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(50);
  }
}

/**
 * Waits, before a kill, until every node in `nodes` has reported `startedOps` acquires of the run:
 * a fixed sleep lands in the run's setup (table zeroing, prepare) on a loaded machine, so the kill
 * would test setup, not recovery. Pass `beforeNodeStart` to runLive.
 */
export function runProgress(): {
  readonly beforeNodeStart: (node: number, progress: { opsDone(node: number): number }) => Promise<void>;
  untilRunning(nodes: readonly number[], startedOps: number, run: Promise<{ readonly failedNodes: readonly unknown[] }>, timeoutMs?: number): Promise<void>;
} {
  let opsDone: ((node: number) => number) | undefined;
  return {
    beforeNodeStart: async (_node, progress) => void (opsDone = progress.opsDone),
    async untilRunning(nodes, startedOps, run, timeoutMs = 30_000) {
      await waitFor(() => nodes.every((n) => (opsDone?.(n) ?? 0) >= startedOps), timeoutMs, `compute nodes ${nodes.join(', ')} past ${startedOps} acquires`).catch(async (error: unknown) => {
        const result = await run.catch(() => undefined);
        throw new Error(`${String(error)}; compute nodes that did not run: ${JSON.stringify(result?.failedNodes ?? 'unknown')}`);
      });
    },
  };
}

// The fence clip lives in @lockfabric/check (the driver applies it to every live run).
export { FENCED_ERROR, clipFencedHolds } from '@lockfabric/check';

/**
 * The survivors' events of a run in which compute node `victim` was killed. The victim's own
 * history, streamed during the run, is kept by the driver up to its death: none of it may come
 * after the moment the driver saw its stream break.
 */
export function survivorsOf(result: { readonly history: readonly HistoryEvent[]; readonly nodeFailures: readonly { readonly node: number; readonly failedAtNs: number }[] }, victim: number): HistoryEvent[] {
  const failure = result.nodeFailures.find((f) => f.node === victim);
  if (!failure) throw new Error(`the run reports no failure of compute node ${victim}`);
  const late = result.history.filter((e) => nodeOf(e) === victim && e.timeNs > failure.failedAtNs);
  if (late.length > 0) throw new Error(`${late.length} events of compute node ${victim} after its failure at ${failure.failedAtNs}: ${JSON.stringify(late.slice(0, 3))}`);
  return result.history.filter((e) => nodeOf(e) !== victim);
}

// The lost-table clip lives in @lockfabric/check (the driver applies it, clipping to the grant).
export { TABLE_LOST_ERROR, clipLostTableHolds } from '@lockfabric/check';
