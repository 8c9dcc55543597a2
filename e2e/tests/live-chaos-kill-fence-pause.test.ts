import { fromBinary } from '@bufbuild/protobuf';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import type { HistoryEvent } from '@lockfabric/check';
import { announceLockTable } from '@lockfabric/coordinator/service';
import { MemoryQueuePair, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { RecoveryPhaseSchema } from '@lockfabric/wire';
import type { RecoveryPhase } from '@lockfabric/wire';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { FENCED_ERROR, MS, clipFencedHolds, liveNowNs, nodeOf, sleep, waitFor } from './live-chaos-support.js';

// The other half of a SIGKILL: a caslock holder is paused (SIGSTOP) past its failure detection, so
// the coordinator declares it dead, the memory node fences it and frees its words, and survivors
// take its locks. Then it resumes (SIGCONT) believing it still holds them. Its late `WRITE 0`
// releases must be refused (FabricAccessError, "fenced") — otherwise they would free a survivor's
// lock and two survivors would hold it at once, which the checker below would report.
const MISSES = 10;
const DETECTION_MS = 100 * MISSES;
const TIMEOUT_MS = 3_000;
const FENCED = FENCED_ERROR;
/** Initiator id of this test's probe queue pair (no compute node has it). */
const PROBE = 64_999;

/** Waits until a caslock word on the memory node names a client of `node` as holder; returns the lock. */
async function waitForHolder(qp: MemoryQueuePair, node: number, locks: number, timeoutMs: number): Promise<number> {
  const { node: memoryNode, regions } = await qp.describe();
  const rkey = regions.find((r) => r.region === 0)!.rkey;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reads = Array.from({ length: locks }, (_, lock) => ({ op: 'read' as const, addr: { node: memoryNode, region: 0, rkey, offset: lock * 8 }, length: 8 }));
    const words = (await qp.post(reads)).map((c) => (c.data ? new DataView(c.data.buffer, c.data.byteOffset, 8).getBigUint64(0, true) : 0n));
    const held = words.findIndex((w) => w !== 0n && w >> 16n === BigInt(node));
    if (held >= 0) return held;
    if (Date.now() >= deadline) break;
    await sleep(2);
  }
  throw new Error(`no lock held by compute node ${node} within ${timeoutMs} ms`);
}

describe('live chaos: a paused caslock holder declared dead is fenced when it resumes', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  const reports: RecoveryPhase[] = [];

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 2, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-fence-pause', logger: silentLogger });
    nc.subscribe(createSubjects(cluster.state.cluster).recovery('phase'), {
      callback: (error, msg) => {
        if (!error) reports.push(fromBinary(RecoveryPhaseSchema, msg.data));
      },
    });
    await nc.flush();
  });
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it('caslock: late releases fail fenced, survivors took the locks, the history passes', async () => {
    const chaos = new LocalChaos(cluster.dir);
    await announceLockTable(nc, createSubjects(cluster.state.cluster), 'caslock', 2);
    const run = runLive({
      state: cluster.state,
      protocol: 'caslock',
      // Long critical sections: the pause below lands inside one of compute-2's holds.
      spec: { clients: 6, locks: 2, readRatio: 0, distribution: 'uniform', durationMs: 5_000, thinkNs: 1 * MS, criticalSectionNs: 200 * MS, seed: 9, timeoutMs: TIMEOUT_MS },
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    const memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    const probe = await MemoryQueuePair.connect(`127.0.0.1:${memory.grpc}`, PROBE, { logger: silentLogger });
    let pausedAtNs = 0;
    let heldLock = -1;
    try {
      await sleep(500);
      // Pause compute-2 while it holds a lock (the word names it), well inside the 200 ms hold.
      // The hold may end between the probe's READ and the stop (a release already on the wire):
      // check again once the node is stopped and its verbs in flight have landed, else try again.
      for (let attempt = 0; ; attempt++) {
        heldLock = await waitForHolder(probe, 2, 2, 3_000);
        pausedAtNs = liveNowNs();
        await chaos.pause('compute-2');
        await sleep(50);
        if ((await waitForHolder(probe, 2, 2, 0).catch(() => -1)) === heldLock) break;
        await chaos.resume('compute-2');
        if (attempt === 5) throw new Error('compute-2 never stayed stopped inside a hold');
      }
      await waitFor(() => reports.some((r) => r.node === 2), DETECTION_MS + 10_000, 'the memory node fences compute-2');
      await sleep(500);
    } finally {
      await chaos.resume('compute-2').catch(() => undefined);
      probe.close();
    }
    const result = await run;
    const fence = reports.find((r) => r.node === 2)!;
    const fencedAtNs = Number(fence.timeNs);
    expect(fencedAtNs).toBeGreaterThan(pausedAtNs);
    const history = result.history;
    expect(new Set(history.map(nodeOf))).toStrictEqual(new Set([1, 2]));

    // compute-2's holds that spanned the fence: their releases were refused with the typed error.
    // A release invoked before the pause may have landed at the memory node before the freeze and
    // have its `ok` recorded only after the resume: that one is allowed (it freed its own hold in
    // time); every release invoked after the pause must be refused.
    const releaseInvokedAt = new Map<string, number>();
    const late: { event: HistoryEvent; invokedAtNs: number }[] = [];
    for (const e of history) {
      if (nodeOf(e) !== 2 || e.op !== 'release') continue;
      if (e.phase === 'invoke') releaseInvokedAt.set(e.client, e.timeNs);
      else if (e.timeNs > fencedAtNs) late.push({ event: e, invokedAtNs: releaseInvokedAt.get(e.client) ?? 0 });
    }
    const around = history.filter((e) => nodeOf(e) === 2 && e.timeNs > pausedAtNs - 300 * MS).slice(0, 24).map((e) => `${e.client} ${e.lock} ${e.op} ${e.phase} ${e.error ?? ''} ${((e.timeNs - pausedAtNs) / MS).toFixed(0)}`);
    const fencedReleases = late.filter(({ event }) => event.phase === 'fail' && event.error === FENCED);
    expect(fencedReleases.length, `fenced releases of compute-2 after it resumed (fenced +${((fencedAtNs - pausedAtNs) / MS).toFixed(0)} ms, held lock ${heldLock}):\n${around.join('\n')}`).toBeGreaterThan(0);
    // (pausedAtNs is read just before the SIGSTOP is sent: allow the few ms until it lands.)
    const stoppedByNs = pausedAtNs + 20 * MS;
    const invokedAfterPause = late.filter(({ invokedAtNs }) => invokedAtNs >= stoppedByNs).map(({ event }) => event);
    expect(invokedAfterPause.every((e) => e.phase === 'fail' && e.error === FENCED), JSON.stringify(invokedAfterPause.slice(0, 5))).toBe(true);
    // Anything else late was invoked before the pause, and only an `ok` (its WRITE beat the freeze).
    expect(late.filter(({ event }) => !(event.phase === 'fail' && event.error === FENCED)).every(({ event, invokedAtNs }) => invokedAtNs < stoppedByNs && event.phase === 'ok')).toBe(true);
    // No acquire compute-2 began after the fence succeeded (it must restart to be admitted). One in
    // flight across the pause may report ok late: its CAS ran before the fence, and the word it won
    // was freed by the recovery; its release is refused like the others.
    const invokedAt = new Map<string, number>();
    const grantedAfterFence: HistoryEvent[] = [];
    for (const e of history) {
      if (nodeOf(e) !== 2 || e.op !== 'acquire') continue;
      if (e.phase === 'invoke') invokedAt.set(e.client, e.timeNs);
      else if (e.phase === 'ok' && (invokedAt.get(e.client) ?? 0) > fencedAtNs) grantedAfterFence.push(e);
    }
    expect(grantedAfterFence).toStrictEqual([]);
    // Survivors took the locks after the fence.
    expect(history.some((e) => nodeOf(e) === 1 && e.op === 'acquire' && e.phase === 'ok' && e.timeNs > fencedAtNs)).toBe(true);

    // A fenced hold protects nothing after the fence; everything else must be exclusive.
    const verdict = checkHistory(clipFencedHolds(history, 2, fencedAtNs));
    expect(verdict.ok, `${summarizeVerdict(verdict)}\ncompute-2 from 300 ms before the pause (ms after it):\n${around.join('\n')}`).toBe(true);
    const survivors = checkHistory(history.filter((e) => nodeOf(e) === 1), { maxWaitNs: (TIMEOUT_MS + 300) * MS });
    expect(survivors.ok, summarizeVerdict(survivors)).toBe(true);
  });
});
