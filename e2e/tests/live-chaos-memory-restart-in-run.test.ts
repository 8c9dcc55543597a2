import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { announceLockTable } from '@lockfabric/coordinator/service';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, clipLostTableHolds, liveNowNs, metric, sleep } from './live-chaos-support.js';

// SIGKILL the memory node mid-run and restart it while the run goes on: compute nodes rebind their
// queue pairs to the new incarnation with backoff, clients back off instead of spinning, holds on
// the lost table end TABLE_LOST, and acquires succeed again on the new table before the run ends.
const spec = { clients: 6, locks: 3, readRatio: 0, distribution: 'uniform', thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 29, timeoutMs: 1_000 } as const;
const RUN_MS = 9_000;

describe('live chaos: the memory node restarts within a run', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 2, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: '6' } });
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-chaos-memory-in-run', logger: silentLogger });
  });
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  // declock also resets each compute node's state about the lost table before use (DecLock §4.6).
  // rpc's lock manager runs in the memory node's process and restarts with it, empty: its replies
  // carry the new incarnation, so the lost table's holds end TABLE_LOST (srvlock README). Its
  // releases retry for 10 s here, past the outage, so the new manager acknowledges them and only
  // the incarnation on that ACK tells the hold was lost (with mutantIgnoreServerRestart: none).
  it.each(['caslock', 'declock', 'rpc'])('%s: the run continues on the new table, failures during the outage are bounded, the history passes', async (protocol) => {
    const chaos = new LocalChaos(cluster.dir);
    const computes = chaos.state().processes.filter((p) => p.role === 'compute');
    const changesBefore = await Promise.all(computes.map((compute) => metric(compute, 'lockfabric_compute_memory_rebinds_total', 'event="incarnationChanges"')));
    const attemptsBefore = await Promise.all(computes.map((compute) => metric(compute, 'lockfabric_compute_memory_rebinds_total', 'event="attempts"')));
    await announceLockTable(nc, createSubjects(cluster.state.cluster), protocol, spec.locks);
    const protocolOptions = protocol === 'rpc' ? { maxAttempts: 2_000 } : undefined;
    const run = runLive({ state: cluster.state, protocol, spec: { ...spec, durationMs: RUN_MS }, tolerateNodeFailures: true, ...(protocolOptions ? { protocolOptions } : {}) });
    run.catch(() => undefined);
    await sleep(1_500);
    const killedAtNs = liveNowNs();
    await chaos.kill('memory-0');
    await sleep(500);
    const restartAtNs = liveNowNs();
    await chaos.restart('memory-0');
    const restartedAtNs = liveNowNs();
    const result = await run;

    expect(result.failedNodes).toStrictEqual([]);
    const history = result.history;
    // The run went on: acquires were granted on the new table before the run ended.
    const grantedAfter = history.filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > restartedAtNs);
    expect(grantedAfter.length).toBeGreaterThan(0);

    // No hot loop: per client, at most the backoff's ramp (8) plus one failure per 100 ms (its floor at the cap) of outage, with slack for one run of 2 s.
    const outageS = (restartedAtNs - killedAtNs) / 1e9;
    const failures = history.filter((e) => e.op === 'acquire' && e.phase === 'fail' && e.timeNs >= killedAtNs && e.timeNs <= restartedAtNs + 2_000 * MS);
    const perClient = new Map<string, number>();
    for (const e of failures) perClient.set(e.client, (perClient.get(e.client) ?? 0) + 1);
    const bound = 8 + Math.ceil((outageS + 2) * 10);
    for (const [client, n] of perClient) expect(n, `client ${client}: ${n} failures in ${outageS.toFixed(2)} s of outage (bound ${bound})`).toBeLessThanOrEqual(bound);

    // Holds on the lost table end at the restart; the rest must be mutually exclusive.
    const verdict = checkHistory(clipLostTableHolds(history, restartAtNs));
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    if (protocol === 'rpc') expect(result.summary.failuresByCode['TABLE_LOST'] ?? 0).toBeGreaterThanOrEqual(1);

    // Rebinding was bounded: each compute node's attempts follow 50 ms doubling to 1 s.
    for (const [i, compute] of computes.entries()) {
      const attempts = (await metric(compute, 'lockfabric_compute_memory_rebinds_total', 'event="attempts"')) - attemptsBefore[i]!;
      const changes = (await metric(compute, 'lockfabric_compute_memory_rebinds_total', 'event="incarnationChanges"')) - changesBefore[i]!;
      // rpc posts no verbs, so a run of it alone opens no queue pair: its clients learn the restart from the manager's replies.
      if (protocol !== 'rpc') expect(changes).toBe(1);
      expect(attempts).toBeLessThanOrEqual(Math.ceil(outageS) + 6);
    }
    console.log(JSON.stringify({ protocol, outageS, failures: failures.length, perClient: Object.fromEntries(perClient), grantedAfter: grantedAfter.length, byCode: result.summary }));
  });
});
