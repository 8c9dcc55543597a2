import type { NodeServiceContext, ProtocolOptions } from '@lockfabric/locks-common';
import { forwardProgram } from '@lockfabric/switch';
import { createSwitchNet, failoverGraceScenario, failureRecoveryReport, runInMemory } from '../../src/index.js';
import { describe, expect, it } from 'vitest';

const NODES = [1, 2, 3];
import type { HistoryEvent } from '@lockfabric/check';
import { currentHome } from '@lockfabric/lock-srvlock';
import type { LockServer } from '@lockfabric/lock-srvlock';
import { PARLOCK_HOMES, parLockHome, parlock } from '@lockfabric/lock-parlock';

const failoverHomeOf = (lock: number, dead: ReadonlySet<number>) => currentHome(PARLOCK_HOMES, lock, NODES, dead);

const MS = 1_000_000;

/** parlock whose managers never hear of failures (the mutant the report must catch). */
const deaf = { ...parlock, services: { compute: (ctx: NodeServiceContext, o?: ProtocolOptions) => parlock.services!.compute!({ ports: ctx.ports, memoryNodes: ctx.memoryNodes, computeNodes: ctx.computeNodes }, o) } };

describe('parlock: a compute node fails (FailureNotice)', () => {
  it('every surviving manager drops the dead node’s holds; the locks homed on the dead node move to the next live node', async () => {
    const net = createSwitchNet({ seed: 5, computeNodes: NODES, program: forwardProgram() });
    net.startServices(parlock);
    const dead = parlock.createClient(net.clientPorts({ node: 3, client: 0 }));
    const survivor = parlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    // Lock 0 is homed on node 1, lock 1 on node 2 (the survivor's own, local path), lock 2 on node 3 (dies).
    expect([0, 1, 2].map((l) => parLockHome(l, NODES))).toStrictEqual([1, 2, 3]);
    const run = (async () => {
      for (const lock of [0, 1, 2]) await dead.acquire(lock, 'exclusive');
      const waits = [0, 1, 2].map((lock) => survivor.acquire(lock, 'exclusive', { timeoutMs: 30 }).catch((e: unknown) => e));
      await net.clock.sleep(0.5 * MS);
      await net.stopServicesOf(3);
      net.failures.fire(3);
      return Promise.all(waits);
    })();
    await net.scheduler.run();
    // Lock 2 now lives on node 1 (next after 3 in the cluster's order), which holds nothing of the dead node.
    expect((await run).map((g) => (g as { lock: number }).lock)).toStrictEqual([0, 1, 2]);
    expect(failoverHomeOf(2, new Set([3]))).toBe(1);
    await net.stopServices();
  });

  // A survivor on node 2 holds lock 2 (homed on node 3) when node 3 dies; a client on node 1 (the
  // new home) asks for it after the notice; lock 5 (also homed on node 3) is served afterwards.
  const graceScenario = (protocolOptions: ProtocolOptions) =>
    failoverGraceScenario<LockServer>({ protocol: parlock, protocolOptions, seed: 5, computeNodes: NODES, deadNode: 3, holderNode: 2, waiterNode: 1, lock: 2, freshLock: 5 });

  it('grace: the new home reclaims the survivors’ holds before serving a moved lock', async () => {
    const { grantedAtNs, releasedAtNs, newHome } = await graceScenario({});
    expect(grantedAtNs).toBeGreaterThan(releasedAtNs);
    expect(newHome.counters.graces).toBe(1);
    expect(newHome.counters.reclaimed).toBe(1);
    expect(newHome.inGrace).toBe(false);
  });

  it('mutant: a new home that serves before grace ends grants the held lock again', async () => {
    const { grantedAtNs, releasedAtNs, newHome } = await graceScenario({ mutantServeDuringGrace: true });
    expect(grantedAtNs).toBeGreaterThan(0);
    expect(grantedAtNs).toBeLessThan(releasedAtNs);
    expect(newHome.counters.reclaimed).toBe(0);
  });

  const spec = { clients: 9, locks: 6, readRatio: 0.3, distribution: 'uniform' as const, durationMs: 40, thinkNs: 20_000, criticalSectionNs: 200_000, seed: 3, timeoutMs: 5 };
  const nodeFailure = { computeNode: 2, atMs: 10, detectionMs: 2 };
  // A release to a dead home gives up (FabricAccessError) after 4 × 5 ms instead of 50 × 5 ms, within the run.
  const protocolOptions = { maxAttempts: 4 };

  /** parlock whose managers are kept, to read their counters after a run. */
  function watched() {
    const servers: LockServer[] = [];
    const protocol = { ...parlock, services: { compute: (ctx: NodeServiceContext, o?: ProtocolOptions) => { const s = parlock.services!.compute!(ctx, o) as LockServer; servers.push(s); return s; } } };
    return { protocol, servers };
  }

  /** Longest acquire (invoke to its end) per run: no acquire may wait past its timeout plus one retransmit interval. */
  function longestAcquireNs(events: Iterable<HistoryEvent>): number {
    const open = new Map<string, number>();
    let longest = 0;
    for (const e of events) {
      if (e.op !== 'acquire') continue;
      if (e.phase === 'invoke') open.set(e.client, e.timeNs);
      else longest = Math.max(longest, e.timeNs - (open.get(e.client) ?? e.timeNs));
    }
    return longest;
  }

  it('sim run: survivors get every lock the dead node held, those homed on it included; the history passes', async () => {
    for (const seed of [3, 4, 5]) {
      const { protocol, servers } = watched();
      const result = await runInMemory({ substrate: 'sim', protocol, protocolOptions, spec: { ...spec, seed }, computeNodes: 3, nodeFailure });
      expect(result.verdict.ok, `seed ${seed} ${JSON.stringify(result.verdict).slice(0, 1500)}`).toBe(true);
      expect(result.cutOff).toBe(false);
      const failure = result.nodeFailure!;
      const computeNodes = [failure.node - 2, failure.node - 1, failure.node];
      const homedOnDead = (lock: number) => parLockHome(lock, computeNodes) === failure.node;
      const report = failureRecoveryReport(result.history.events(), failure.node, failure.failedAtNs);
      expect(report.heldByDead.length, `seed ${seed}: the failed node held locks`).toBeGreaterThan(0);
      expect(report.neverFreed, `seed ${seed}`).toStrictEqual([]);
      const detectionNs = failure.reportedAtNs - failure.failedAtNs;
      for (const lock of report.heldByDead.filter((l) => !homedOnDead(l))) {
        // Free once reported: granted within 1 ms of the notice, or of the first survivor asking after it.
        const demandNs = report.firstSurvivorDemandAfterNs.get(lock) ?? 0;
        expect(report.firstSurvivorGrantAfterNs.get(lock), `seed ${seed} lock ${lock}`).toBeLessThanOrEqual(Math.max(demandNs, detectionNs) + 1 * MS);
      }
      // Locks homed on the dead node come back: survivors are granted them after the notice.
      const movedGrants = [...result.history.events()].filter((e) => e.op === 'acquire' && e.phase === 'ok' && homedOnDead(e.lock) && e.timeNs > failure.reportedAtNs);
      expect(new Set(movedGrants.map((e) => e.lock)), `seed ${seed}`).toStrictEqual(new Set([...Array(spec.locks).keys()].filter(homedOnDead)));
      expect(longestAcquireNs(result.history.events()), `seed ${seed}`).toBeLessThanOrEqual((spec.timeoutMs + 5) * MS + 0.1 * MS);
      expect(servers.reduce((n, s) => n + s.counters.graces, 0), `seed ${seed}`).toBe(1);
    }
  });

  // Three locks, critical sections longer than detection and off the 5 ms retransmit grid, failure mid-hold:
  // survivors hold the moved lock (2) across the failure while others wait for it, so grace matters.
  const longHolds = { ...spec, locks: 3, readRatio: 0.1, criticalSectionNs: 7.3 * MS, timeoutMs: 40, durationMs: 80 };
  const midHold = { ...nodeFailure, atMs: 15 };

  it('sim run with holds across the failure: the new home reclaims them; the mutant that serves during grace is caught by the checker', async () => {
    let reclaimed = 0;
    let caught = 0;
    for (const seed of [3, 4, 5, 6]) {
      const { protocol, servers } = watched();
      const result = await runInMemory({ substrate: 'sim', protocol, protocolOptions, spec: { ...longHolds, seed }, computeNodes: 3, nodeFailure: midHold });
      expect(result.verdict.ok, `seed ${seed} ${JSON.stringify(result.verdict).slice(0, 800)}`).toBe(true);
      expect(result.cutOff).toBe(false);
      expect(longestAcquireNs(result.history.events()), `seed ${seed}`).toBeLessThanOrEqual((longHolds.timeoutMs + 5) * MS + 0.1 * MS);
      reclaimed += servers.reduce((n, s) => n + s.counters.reclaimed, 0);
      const mutant = await runInMemory({ substrate: 'sim', protocol: parlock, protocolOptions: { ...protocolOptions, mutantServeDuringGrace: true }, spec: { ...longHolds, seed }, computeNodes: 3, nodeFailure: midHold });
      if (!mutant.verdict.ok && mutant.verdict.violations.length > 0) caught++;
    }
    expect(reclaimed).toBeGreaterThan(0);
    expect(caught).toBeGreaterThan(0);
  });

  it('mutant: managers that ignore the notice leave the dead node’s locks held (caught by the report)', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: deaf, protocolOptions, spec, computeNodes: 3, nodeFailure });
    const failure = result.nodeFailure!;
    const report = failureRecoveryReport(result.history.events(), failure.node, failure.failedAtNs);
    expect(report.heldByDead.length).toBeGreaterThan(0);
    expect(report.neverFreed).toStrictEqual(report.heldByDead);
  });
});
