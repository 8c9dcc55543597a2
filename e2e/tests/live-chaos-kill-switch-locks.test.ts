import { readFileSync } from 'node:fs';
import { create, fromBinary } from '@bufbuild/protobuf';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import type { HistoryEvent } from '@lockfabric/check';
import { UnaryClient, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { DescribeSwitchRequestSchema, FailureNoticeSchema, ReadRegistersRequestSchema, SwitchControlService } from '@lockfabric/wire';
import type { FailureNotice } from '@lockfabric/wire';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, grantsAfter, liveNowNs, metric, nodeOf, sleep, survivorsOf, waitFor } from './live-chaos-support.js';

// SIGKILL a compute node whose clients hold and wait for NetLock's hot locks (queued in the
// switch), in one cluster of real processes: switch-dataplane running the netlock program, a
// coordinator, a memory node and three compute nodes. The three locks are all hot (the driver's
// knapsack allocation over the workload's profile), so every grant is the switch's. When the
// coordinator declares compute-3 dead it calls SwitchControl.PurgeNetLockMachine, which fences
// machine 3 in the switch and takes its queue entries out, granting the survivors behind them
// (NetLock's control package, libs/locks/netlock/control). srvlock and parlock have the same test beside this one
// (live-chaos-kill-switch.test.ts).
const TIMEOUT_MS = 1_500;
/** An acquire that times out waits one retransmit interval for its withdrawal, plus scheduling. */
const WAIT_SLACK_MS = 300;
/** Scheduling slack on a shared 2-core machine, on top of detection (the purge is one gRPC call). */
const SLACK_MS = 700;
const COMPUTE_NODES = 3;
const CLIENTS = 9;
/** Heartbeats every 100 ms; 10 misses so a survivor stalled by the loaded machine is not taken for dead. */
const MISSES = 10;
const DETECTION_MS = 100 * MISSES;
const LOCKS = 3;
const VICTIM = 3;
/** Live retransmits sized for NATS round trips; a full switch queue is retried after up to 2 ms. */
const OPTIONS = { retransmitNs: '20000000', maxAttempts: '25', pushBackNs: '2000000' };
const PURGE_LINE = new RegExp(
  `netlock purge after compute/\\S+ \\(node ${VICTIM}\\): (\\d+) switch-queue entr(?:y|ies) removed \\((\\d+) holding\\) on (\\d+) hot lock\\(s\\), (\\d+) grant\\(s\\) sent.*?; ([\\d.]+) ms after detection`,
);

/**
 * Entries of `machine` in the switch's NetLock queues now (read over SwitchControl), holds it
 * released already left out: the victim is killed only once it has some, so the purge always has
 * work. Queue state word: head | count << 8 | granted << 16; `netlock.qgone` marks released holds.
 */
async function queueEntriesOf(control: UnaryClient, machine: number, slots: number, hotLocks: number): Promise<number> {
  const read = async (array: string, count: number) => (await control.call(SwitchControlService.method.readRegisters, create(ReadRegistersRequestSchema, { array, index: 0, count }))).values;
  const states = await read('netlock.qstate', hotLocks);
  const machines = await read('netlock.qmachine', slots);
  const gone = await read('netlock.qgone', slots);
  const size = slots / hotLocks; // the driver's allocation: equal queues laid out back to back
  let n = 0;
  states.forEach((word, lock) => {
    const head = word & 0xff;
    const count = (word >>> 8) & 0xff;
    const granted = (word >>> 16) & 0xff;
    for (let i = 0; i < count; i++) {
      const slot = lock * size + ((head + i) % size);
      if (machines[slot] === machine && !(i < granted && gone[slot] === 1)) n++;
    }
  });
  return n;
}

/** Survivor acquires invoked at or after `fromNs` that failed (each client's events are in its own order). */
function failedAfter(history: readonly HistoryEvent[], fromNs: number): string[] {
  const invokedAt = new Map<string, number>();
  const failed: string[] = [];
  for (const e of history) {
    if (e.op !== 'acquire') continue;
    if (e.phase === 'invoke') invokedAt.set(e.client, e.timeNs);
    else if (e.phase === 'fail' && (invokedAt.get(e.client) ?? -Infinity) >= fromNs) failed.push(`${e.client} lock ${e.lock}: ${e.error ?? 'no error'}`);
  }
  return failed;
}

/**
 * The switch's NetLock queues as text (one line per hot lock: state word, then every slot as
 * mode machine/task#rid, G when marked released), for the message of a failed liveness check.
 */
async function describeQueues(control: UnaryClient, slots: number, hotLocks: number): Promise<string> {
  const read = async (array: string, count: number) => (await control.call(SwitchControlService.method.readRegisters, create(ReadRegistersRequestSchema, { array, index: 0, count }))).values;
  const states = await read('netlock.qstate', hotLocks);
  const [modes = [], machines = [], tasks = [], rids = [], gone = []] = await Promise.all(['netlock.qmode', 'netlock.qmachine', 'netlock.qtask', 'netlock.qrid', 'netlock.qgone'].map((a) => read(a, slots)));
  const size = slots / hotLocks;
  return states
    .map((word, lock) => {
      const slotsText = Array.from({ length: size }, (_, i) => {
        const slot = lock * size + i;
        return `${i}:${modes[slot] ? 'x' : 's'}${machines[slot]}/${tasks[slot]}#${rids[slot]}${gone[slot] ? 'G' : ''}`;
      });
      return `lock ${lock}: head ${word & 0xff} count ${(word >>> 8) & 0xff} granted ${(word >>> 16) & 0xff} released ${(word >>> 24) & 0x7f} | ${slotsText.join(' ')}`;
    })
    .join('\n');
}

describe('live chaos: SIGKILL a compute node holding NetLock hot locks (switch queues)', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  let coordinator: ProcessRecord;
  const notices: { notice: FailureNotice; atNs: number }[] = [];

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: true, switchProgram: 'netlock', computeNodes: COMPUTE_NODES, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-chaos-netlock', logger: silentLogger });
    nc.subscribe(createSubjects(cluster.state.cluster).recovery('failure'), {
      callback: (error, msg) => {
        if (!error) notices.push({ notice: fromBinary(FailureNoticeSchema, msg.data), atNs: liveNowNs() });
      },
    });
    await nc.flush();
    // The switch drops epoch-stamped packets until the coordinator opens its admission (first
    // sight, after the switch announced its control address). A run started before that loses its
    // first packets, and NetLock sends a RELEASE or an ACQUIRE once: the lock would be lost from
    // the start, whatever the kill does (seen live under load: 6 batches dropped as "closed").
    const sw = cluster.state.processes.find((p) => p.role === 'switch')!;
    const control = new UnaryClient(`127.0.0.1:${sw.grpc}`, 2_000);
    const admits = async () => (await control.call(SwitchControlService.method.describe, create(DescribeSwitchRequestSchema)).catch(() => undefined))?.admissionOpen === true;
    await waitFor(admits, 30_000, 'the switch admits stamped packets').finally(() => control.close());
  }, 120_000);
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it('netlock: the dead node’s queue entries are purged, survivors get the locks again, the history passes', async () => {
    const chaos = new LocalChaos(cluster.dir);
    const run = runLive({
      state: cluster.state,
      protocol: 'netlock',
      protocolOptions: OPTIONS,
      spec: { clients: CLIENTS, locks: LOCKS, readRatio: 0.3, distribution: 'uniform', durationMs: 5_000, thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 29, timeoutMs: TIMEOUT_MS },
      tolerateNodeFailures: true,
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    const sw = cluster.state.processes.find((p) => p.role === 'switch')!;
    const control = new UnaryClient(`127.0.0.1:${sw.grpc}`, 2_000);
    await sleep(900);
    // Mid-run, and the victim has requests in the switch queues (holding or waiting). Bounded in
    // time, so the kill leaves the survivors at least 1 s of run after the failure notice.
    let victimEntries = 0;
    const pollUntilMs = Date.now() + 2_000;
    for (let i = 0; i < 100 && victimEntries < 2 && Date.now() < pollUntilMs; i++) {
      victimEntries = await queueEntriesOf(control, VICTIM, CLIENTS * LOCKS, LOCKS).catch(() => 0);
      if (victimEntries < 2) await sleep(10);
    }
    const killedAtNs = liveNowNs();
    await chaos.kill(`compute-${VICTIM}`);
    const result = await run;
    const queuesAfter = await describeQueues(control, CLIENTS * LOCKS, LOCKS).catch((error: unknown) => `registers unreadable: ${String(error)}`);
    const admissionDrops = await metric(sw, 'lockfabric_switch_admission_drops_total').catch(() => NaN);
    control.close();

    expect(result.switch?.program).toBe('netlock');
    expect(result.switch?.hotLocks).toBe(LOCKS);
    expect(result.failedNodes.map((f) => f.node)).toStrictEqual([VICTIM]);
    const survivors = survivorsOf(result, VICTIM);
    expect(new Set(survivors.map(nodeOf))).toStrictEqual(new Set([1, 2]));
    // Safety, and no acquire waited past its timeout (maxWaitNs), over the survivors' history.
    const failedClients = Object.fromEntries(Array.from({ length: CLIENTS }, (_, i) => [`${VICTIM}/${i}`, killedAtNs]));
    const verdict = checkHistory(survivors, { failedClients, maxWaitNs: (TIMEOUT_MS + WAIT_SLACK_MS) * MS });
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    const ends = survivors.filter((e) => e.op === 'acquire' && e.phase !== 'invoke');
    expect(ends.filter((e) => e.phase === 'fail' && !e.error).length, 'failures without a typed error').toBe(0);

    // The coordinator declared the victim dead and purged its entries from the switch queues.
    const declared = notices.filter((n) => n.notice.role === 'compute');
    expect(declared.map((n) => n.notice.node)).toContain(VICTIM);
    const purge = PURGE_LINE.exec(readFileSync(coordinator.log, 'utf8'));
    if (process.env['DBG']) for (const p of cluster.state.processes) console.log(p.name, readFileSync(p.log, 'utf8').split('\n').filter((l) => /netlock|recovery|dead|fenced/i.test(l)).slice(-15).join('\n'));
    if (process.env['DBG']) console.log(JSON.stringify(result.summary), JSON.stringify(result.switch));
    expect(purge, `the coordinator's purge of machine ${VICTIM} (log ${coordinator.log})`).not.toBeNull();
    const [removed, holding, locks, grantsSent, purgeMs] = (purge ?? []).slice(1).map(Number) as [number, number, number, number, number];
    // The victim was killed with requests in the switch queues: the purge found some of them.
    expect(victimEntries, 'victim entries in the switch queues just before the kill').toBeGreaterThan(0);
    expect(removed).toBeGreaterThan(0);

    // Every lock is granted to a survivor again after the kill, within detection plus slack.
    const grants = grantsAfter(survivors, killedAtNs);
    const firsts = Array.from({ length: LOCKS }, (_, lock) => ((grants.get(lock)?.[0] ?? Infinity) - killedAtNs) / MS);
    const noticeMs = ((declared.find((n) => n.notice.node === VICTIM)?.atNs ?? Infinity) - killedAtNs) / MS;
    // After the notice every lock is granted again (the purge freed what the victim held).
    const firstsAfterNotice = Array.from({ length: LOCKS }, (_, lock) => ((grants.get(lock) ?? []).map((t) => (t - killedAtNs) / MS).find((ms) => ms > noticeMs) ?? Infinity));
    const afterNotice = firstsAfterNotice.map((ms) => Number.isFinite(ms));
    console.log(
      `netlock SIGKILL of compute-${VICTIM}: notice +${noticeMs.toFixed(0)} ms; purge ${purgeMs.toFixed(1)} ms after detection ` +
        `(${removed} entries removed, ${holding} holding, on ${locks} lock(s), ${grantsSent} grant(s)); first survivor grant per lock after the kill: ` +
        firsts.map((ms, lock) => `lock ${lock} ${Number.isFinite(ms) ? `+${ms.toFixed(0)} ms` : 'never'}`).join(', ') +
        `; first after the notice: ` +
        firstsAfterNotice.map((ms, lock) => `lock ${lock} ${Number.isFinite(ms) ? `+${ms.toFixed(0)} ms` : 'never'}`).join(', ') +
        `; victim entries seen just before the kill ${victimEntries}; survivor acquires ${ends.filter((e) => e.phase === 'ok').length} granted, ${ends.filter((e) => e.phase === 'fail').length} failed`,
    );
    // Liveness after a kill: every lock is granted to a survivor again after the notice, and soon after the kill;
    // no survivor acquire invoked once the purge had answered fails. The gap CI saw (two locks
    // never granted again, 11 survivor acquires timing out) has two known causes (netlock README,
    // "Locks never granted again"): a timed-out request queued twice (fixed in NetLock's client),
    // and packets the switch refused before its admission opened (the wait in beforeAll).
    const queues = `batches the switch admission refused: ${admissionDrops}; switch queues after the run:\n${queuesAfter}`;
    expect(afterNotice, `per lock: granted to a survivor after the failure notice; ${queues}`).toStrictEqual(Array.from({ length: LOCKS }, () => true));
    for (const [lock, firstMs] of firsts.entries()) {
      expect(firstMs, `first survivor grant of lock ${lock} after the kill; ${queues}`).toBeLessThanOrEqual(DETECTION_MS + SLACK_MS);
    }
    const purgedMs = noticeMs + purgeMs;
    const lateFailures = failedAfter(survivors, killedAtNs + purgedMs * MS);
    expect(lateFailures, `survivor acquires invoked after the purge (+${purgedMs.toFixed(0)} ms) that failed; ${queues}`).toEqual([]);
  });
});
