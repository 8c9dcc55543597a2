import { LockTimeoutError } from '@lockfabric/ports';
import type { NodeServiceContext, ProtocolOptions } from '@lockfabric/locks-common';
import { forwardProgram } from '@lockfabric/switch';
import { createSwitchNet, failureRecoveryReport, runInMemory } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { parLockHome, parlock } from '../src/index.js';

const NODES = [1, 2, 3];
const MS = 1_000_000;

/** parlock whose managers never hear of failures (the mutant the report must catch). */
const deaf = { ...parlock, services: { compute: (ctx: NodeServiceContext, o?: ProtocolOptions) => parlock.services!.compute!({ ports: ctx.ports, memoryNodes: ctx.memoryNodes, computeNodes: ctx.computeNodes }, o) } };

describe('parlock: a compute node fails (FailureNotice)', () => {
  it('every surviving partition manager drops the dead node’s holds; locks homed on the dead node time out', async () => {
    const net = createSwitchNet({ seed: 5, computeNodes: NODES, program: forwardProgram() });
    net.startServices(parlock);
    const dead = parlock.createClient(net.clientPorts({ node: 3, client: 0 }));
    const survivor = parlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    // Lock 0 is homed on node 1, lock 1 on node 2 (the survivor's own, local path), lock 2 on node 3 (dies).
    expect([0, 1, 2].map((l) => parLockHome(l, NODES))).toStrictEqual([1, 2, 3]);
    const run = (async () => {
      for (const lock of [0, 1]) await dead.acquire(lock, 'exclusive');
      const waits = [0, 1].map((lock) => survivor.acquire(lock, 'exclusive', { timeoutMs: 3 }).catch((e: unknown) => e));
      await net.clock.sleep(0.5 * MS);
      await net.stopServicesOf(3);
      net.failures.fire(3);
      const granted = await Promise.all(waits);
      const startNs = net.clock.nowNs();
      const lost = await survivor.acquire(2, 'exclusive', { timeoutMs: 2 }).catch((e: unknown) => e);
      return { granted, lost, lostWaitNs: net.clock.nowNs() - startNs };
    })();
    await net.scheduler.run();
    const { granted, lost, lostWaitNs } = await run;
    expect(granted.map((g) => (g as { lock: number }).lock)).toStrictEqual([0, 1]);
    expect(lost).toBeInstanceOf(LockTimeoutError);
    // The withdrawal to a dead home waits one retransmit interval (5 ms) at most, not 50 attempts.
    expect(lostWaitNs).toBeLessThanOrEqual(2 * MS + 5 * MS + 0.1 * MS);
    await net.stopServices();
  });

  const spec = { clients: 9, locks: 6, readRatio: 0.3, distribution: 'uniform' as const, durationMs: 40, thinkNs: 20_000, criticalSectionNs: 200_000, seed: 3, timeoutMs: 5 };
  const nodeFailure = { computeNode: 2, atMs: 10, detectionMs: 2 };
  // A release to a dead home gives up (FabricAccessError) after 4 × 5 ms instead of 50 × 5 ms, within the run.
  const protocolOptions = { maxAttempts: 4 };

  it('sim run: survivors get the dead node’s locks homed on surviving nodes; the history passes', async () => {
    for (const seed of [3, 4, 5]) {
      const result = await runInMemory({ substrate: 'sim', protocol: parlock, protocolOptions, spec: { ...spec, seed }, computeNodes: 3, nodeFailure });
      expect(result.verdict.ok, `seed ${seed} ${JSON.stringify(result.verdict).slice(0, 1500)}`).toBe(true);
      expect(result.cutOff).toBe(false);
      const failure = result.nodeFailure!;
      const computeNodes = [failure.node - 2, failure.node - 1, failure.node];
      const homedOnDead = (lock: number) => parLockHome(lock, computeNodes) === failure.node;
      const report = failureRecoveryReport(result.history.events(), failure.node, failure.failedAtNs);
      const recoverable = report.heldByDead.filter((l) => !homedOnDead(l));
      expect(recoverable.length, `seed ${seed}: the failed node held locks homed elsewhere`).toBeGreaterThan(0);
      expect(report.neverFreed.filter((l) => !homedOnDead(l)), `seed ${seed}`).toStrictEqual([]);
      const detectionNs = failure.reportedAtNs - failure.failedAtNs;
      for (const lock of recoverable) {
        // Free once reported: granted within 1 ms of the notice, or of the first survivor asking after it.
        const demandNs = report.firstSurvivorDemandAfterNs.get(lock) ?? 0;
        expect(report.firstSurvivorGrantAfterNs.get(lock), `seed ${seed} lock ${lock}`).toBeLessThanOrEqual(Math.max(demandNs, detectionNs) + 1 * MS);
      }
      // Locks homed on the dead node are lost with its manager: survivors' later acquires of them end in a timeout.
      const lostEnds = [...result.history.events()].filter((e) => e.op === 'acquire' && e.phase !== 'invoke' && homedOnDead(e.lock) && e.timeNs > failure.failedAtNs + (spec.timeoutMs + 6) * MS);
      expect(lostEnds.length).toBeGreaterThan(0);
      expect(new Set(lostEnds.map((e) => e.error))).toStrictEqual(new Set(['LockTimeoutError']));
    }
  });

  it('mutant: managers that ignore the notice leave the dead node’s locks held (caught by the report)', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: deaf, protocolOptions, spec, computeNodes: 3, nodeFailure });
    const failure = result.nodeFailure!;
    const report = failureRecoveryReport(result.history.events(), failure.node, failure.failedAtNs);
    expect(report.heldByDead.length).toBeGreaterThan(0);
    expect(report.neverFreed).toStrictEqual(report.heldByDead);
  });
});
