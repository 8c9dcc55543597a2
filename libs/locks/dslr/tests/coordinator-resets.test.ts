/**
 * Coordinator-driven resets (spec §7.6): the whole-table reset between runs and the planned
 * freeze-and-drain of one hot lock, driven from a coordinator's own verbs beside live clients.
 */
import { HistoryRecorder, checkHistory, summarizeVerdict } from '@lockfabric/check';
import { NS_PER_MS } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { RunStats, runClients } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { WordLayout, dslr, drainDslrLock, formatCounters, resetDslrTable } from '../src/index.js';
import type { DrainReport } from '../src/index.js';
import { Scenario } from './support/scenario.js';

const US = 1_000;
const LAMBDA = 100 * US;
const standard = WordLayout.of('standard');
const OPTIONS = { leaseNs: LAMBDA };

describe('dslr: whole-table reset between runs (§7.6 a)', () => {
  async function runThenReset(spec: WorkloadSpec) {
    const { cluster, scheduler } = createSimCluster({ seed: spec.seed, lockCount: spec.locks, entryBytes: 8, memoryNodes: 2 });
    const ports = Array.from({ length: spec.clients }, (_, i) => cluster.clientPorts({ node: cluster.computeNodeIds[i % 2]!, client: i }));
    const recorder = new HistoryRecorder();
    const clock = cluster.clock;
    const coordinator = cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 4000 });
    const done = (async () => {
      await runClients({ protocol: dslr, protocolOptions: OPTIONS, spec, ports, recorder, stats: new RunStats(), clock });
      // The barrier: every client loop has returned, nothing is held or queued.
      return resetDslrTable(coordinator.verbs, cluster.layout);
    })();
    await scheduler.run();
    return { report: await done, verdict: checkHistory(recorder), cluster };
  }

  const spec: WorkloadSpec = { clients: 8, locks: 12, readRatio: 0.5, distribution: { zipf: 0.99 }, operations: 400, thinkNs: 500, criticalSectionNs: 2_000, seed: 5 };

  it('after a crash-free run every word is drained (I4); the reset zeroes all of them, spread over two memory nodes', async () => {
    const { report, verdict, cluster } = await runThenReset(spec);
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    expect(report.locks).toBe(12);
    expect(report.nonZeroBefore).toBeGreaterThan(6);
    expect(report.conservationViolations).toEqual([]);
    expect(report.notZeroAfter).toEqual([]);
    for (let lock = 0; lock < 12; lock++) {
      const home = cluster.layout.memoryNodes[lock % 2]!;
      expect(cluster.node(home.node).memory.cpuLoad({ ...home, offset: home.baseOffset + Math.floor(lock / 2) * 8 })).toBe(0n);
    }
  });

  it('reports a word with an outstanding ticket (a lost release) as a conservation violation', async () => {
    const s = new Scenario(OPTIONS);
    s.setCounters({ nX: 1, nS: 2, maxX: 2, maxS: 2 }, 3);
    s.setCounters({ nX: 4, nS: 4, maxX: 4, maxS: 4 }, 5);
    const coordinator = s.ports();
    const done = resetDslrTable(coordinator.verbs, s.cluster.layout);
    await s.run();
    const report = await done;
    expect(report.nonZeroBefore).toBe(2);
    expect(report.conservationViolations).toEqual([{ lock: 3, word: standard.encode({ nX: 1, nS: 2, nU: 0, maxX: 2, maxS: 2, maxU: 0 }), counters: '{1,2,2,2}' }]);
    expect(s.word(3)).toBe(0n);
  });
});

describe('dslr: planned freeze-and-drain of one lock (§7.6 b)', () => {
  it('queued holders drain, new acquires wait until the reopening, nobody overlaps, the lock works after', async () => {
    const s = new Scenario(OPTIONS);
    s.setCounters({ nX: 700, nS: 900, maxX: 700, maxS: 900 });
    const holder = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 60 * US });
    const queued = [s.hold(s.client(), { atNs: 1 * US, mode: 'shared', holdNs: 20 * US }), s.hold(s.client(), { atNs: 2 * US, mode: 'exclusive', holdNs: 20 * US })];
    const coordinator = s.ports();
    let frozenSeen = '';
    const drain = s.at(10 * US, async () => {
      const report = drainDslrLock(coordinator.verbs, s.cluster.layout, 0, { clock: s.cluster.clock, protocolOptions: OPTIONS });
      await s.cluster.clock.sleep(5 * US);
      frozenSeen = formatCounters(s.counters(), standard);
      return { report: await report, endNs: s.cluster.clock.nowNs() };
    });
    const late = [s.hold(s.client(), { atNs: 20 * US, mode: 'exclusive', holdNs: 5 * US }), s.hold(s.client(), { atNs: 30 * US, mode: 'shared', holdNs: 5 * US })];
    await s.run();
    const { report, endNs } = await drain;
    expect(report).toMatchObject({ lock: 0, outcome: 'drained' });
    // Frozen with maxX at exactly COUNT_MAX, the queued tickets untouched.
    expect(frozenSeen).toBe('{700,900,32768,901}');
    for (const q of await Promise.all(queued)) expect(q.releasedNs!).toBeLessThanOrEqual(endNs);
    for (const l of await Promise.all(late)) {
      expect(l.granted).toBe(true);
      expect(l.grantNs!).toBeGreaterThanOrEqual(endNs);
    }
    expect((await holder).releaseError).toBeUndefined();
    expect(s.verdict().ok).toBe(true);
    // A fresh generation: only the two late tickets were drawn after the reset.
    expect(formatCounters(s.counters(), standard)).toBe('{1,1,1,1}');
  });

  it('a new acquire whose deadline falls inside the drain fails with LockTimeoutError, holding nothing', async () => {
    const s = new Scenario(OPTIONS);
    const holder = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 80 * US });
    const coordinator = s.ports();
    const drain = s.at(5 * US, () => drainDslrLock(coordinator.verbs, s.cluster.layout, 0, { clock: s.cluster.clock, protocolOptions: OPTIONS }));
    const impatient = s.hold(s.client(), { atNs: 10 * US, mode: 'shared', holdNs: 5 * US, acquire: { timeoutMs: 0.03 } });
    await s.run();
    expect((await drain).outcome).toBe('drained');
    expect(await impatient).toMatchObject({ granted: false, error: 'LockTimeoutError' });
    expect((await holder).releaseError).toBeUndefined();
    expect(s.word()).toBe(0n);
  });

  it('a dead holder: the counters stand still for 2λ, the word is zeroed anyway and the lock reopens', async () => {
    const s = new Scenario(OPTIONS);
    const dead = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: Infinity });
    const coordinator = s.ports();
    const drain = s.at(5 * US, () => drainDslrLock(coordinator.verbs, s.cluster.layout, 0, { clock: s.cluster.clock, protocolOptions: OPTIONS }));
    const after = s.hold(s.client({ restartOnAbort: true }), { atNs: 10 * US, mode: 'exclusive', holdNs: 5 * US });
    await s.run(5 * LAMBDA);
    const report = await drain;
    expect(report.outcome).toBe('forced-zero');
    expect(report.elapsedNs).toBeGreaterThan(2 * LAMBDA - 5 * US);
    expect(report.elapsedNs).toBeLessThan(3 * LAMBDA);
    expect((await after).granted).toBe(true);
    const h = await dead;
    expect(s.verdict({ [h.client]: h.grantNs! + 1 }).ok).toBe(true);
  });

  it('an idle lock is zeroed with one READ and one CAS; a word frozen by a client resetter is left to it', async () => {
    const idle = new Scenario(OPTIONS);
    idle.setCounters({ nX: 5, nS: 9, maxX: 5, maxS: 9 });
    const coordinator = idle.ports();
    const done = drainDslrLock(coordinator.verbs, idle.cluster.layout, 0, { clock: idle.cluster.clock, protocolOptions: OPTIONS });
    await idle.run();
    expect(await done).toMatchObject({ outcome: 'idle-zeroed', verbs: 2 });
    expect(idle.word()).toBe(0n);

    const natural = new Scenario({ ...OPTIONS, counterLimit: 8 });
    natural.setCounters({ nX: 7, nS: 0, maxX: 7, maxS: 0 });
    const resetter = natural.hold(natural.client(), { atNs: 0, mode: 'exclusive', holdNs: 30 * US });
    const watcher = natural.ports();
    const watched = natural.at(5 * US, () => drainDslrLock(watcher.verbs, natural.cluster.layout, 0, { clock: natural.cluster.clock, protocolOptions: { ...OPTIONS, counterLimit: 8 } }));
    await natural.run();
    expect(await watched).toMatchObject({ outcome: 'reset-elsewhere' });
    expect((await resetter).releaseError).toBeUndefined();
    expect(natural.word()).toBe(0n);
  });

  it('a coordinator that dies after the freeze: the bouncers zero the word about 2λ after the counters stopped', async () => {
    const s = new Scenario({ ...OPTIONS, backoffCapNs: 20 * US });
    const holder = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 10 * US });
    const coordinator = s.ports();
    // Its deadline is the crash: it froze the word and stops before draining.
    const drain = s.at(2 * US, () => drainDslrLock(coordinator.verbs, s.cluster.layout, 0, { clock: s.cluster.clock, protocolOptions: OPTIONS, timeoutMs: 0.001 }));
    const bouncer = s.hold(s.client(), { atNs: 5 * US, mode: 'exclusive', holdNs: 5 * US });
    await s.run();
    await expect(drain).rejects.toMatchObject({ name: 'LockTimeoutError' });
    const b = await bouncer;
    expect((await holder).releaseError).toBeUndefined();
    expect(b.granted).toBe(true);
    expect(b.grantNs!).toBeGreaterThan(2 * LAMBDA);
    expect(b.grantNs!).toBeLessThan(4 * LAMBDA);
    expect(s.verdict().ok).toBe(true);
  });

  it('random runs with a coordinator draining the hot lock over and over: the checker passes, every drain ends', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const spec: WorkloadSpec = { clients: 6 + (seed % 5), locks: 2, readRatio: 0.5, distribution: { zipf: 0.99 }, durationMs: 3, thinkNs: 1_000, criticalSectionNs: 3_000 + seed * 500, seed, timeoutMs: 1 };
      const { cluster, scheduler } = createSimCluster({ seed, lockCount: 2, entryBytes: 8 });
      const ports = Array.from({ length: spec.clients }, (_, i) => cluster.clientPorts({ node: cluster.computeNodeIds[i % 2]!, client: i }));
      const recorder = new HistoryRecorder();
      const coordinator = cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 4000 });
      let running = true;
      const drains: DrainReport[] = [];
      const driver = (async () => {
        while (running) {
          await cluster.clock.sleep(150 * US);
          if (running) drains.push(await drainDslrLock(coordinator.verbs, cluster.layout, 0, { clock: cluster.clock, random: coordinator.random, protocolOptions: OPTIONS }));
        }
      })();
      const run = runClients({ protocol: dslr, protocolOptions: OPTIONS, spec, ports, recorder, stats: new RunStats(), clock: cluster.clock }).finally(() => (running = false));
      await scheduler.run({ untilNs: cluster.clock.nowNs() + 100 * NS_PER_MS });
      await run;
      await driver;
      const verdict = checkHistory(recorder);
      expect(verdict.ok, `seed ${seed}: ${summarizeVerdict(verdict)}`).toBe(true);
      expect(recorder.events().some((e) => e.error === 'LeaseBrokenError' || e.error === 'LeaseExpiredError'), `seed ${seed}`).toBe(false);
      expect(drains.length, `seed ${seed}`).toBeGreaterThan(5);
      expect(drains.filter((d) => d.outcome === 'drained').length, `seed ${seed}`).toBeGreaterThan(0);
      expect(drains.every((d) => d.outcome === 'drained' || d.outcome === 'idle-zeroed'), `seed ${seed}: ${drains.map((d) => d.outcome).join(',')}`).toBe(true);
    }
  }, 120_000);

  it('the checker catches a coordinator that zeroes the word without draining it (mutant)', async () => {
    const s = new Scenario(OPTIONS);
    const holder = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 50 * US });
    const coordinator = s.ports();
    s.at(10 * US, async () => {
      const word = s.word();
      await coordinator.verbs.cas(s.addr(0), word, 0n);
    });
    const next = s.hold(s.client(), { atNs: 20 * US, mode: 'exclusive', holdNs: 50 * US });
    await s.run();
    await Promise.all([holder, next]);
    expect(s.verdict().exclusion.violationCount).toBeGreaterThan(0);
  });
});
