import { LockTimeoutError } from '@lockfabric/ports';
import type { NodeServiceContext } from '@lockfabric/locks-common';
import { forwardProgram } from '@lockfabric/switch';
import { failureRecoveryReport, createSwitchNet, runInMemory } from '../../src/index.js';
import { describe, expect, it } from 'vitest';
import { srvlock } from '@lockfabric/lock-srvlock';
import type { LockServer } from '@lockfabric/lock-srvlock';

const NODES = [1, 2, 3];
const MS = 1_000_000;

/** srvlock whose servers never hear of failures: the dead holder keeps its locks (the mutant). */
const deaf = { ...srvlock, services: { compute: (ctx: NodeServiceContext, o?: Record<string, string | number | boolean>) => srvlock.services!.compute!({ ports: ctx.ports, memoryNodes: ctx.memoryNodes, computeNodes: ctx.computeNodes }, o) } };

describe('srvlock: a compute node fails (FailureNotice)', () => {
  function scenario(fire: boolean) {
    const net = createSwitchNet({ seed: 7, computeNodes: NODES, program: forwardProgram() });
    let server: LockServer | undefined;
    net.startServices({
      ...srvlock,
      services: {
        compute: (ctx, o) => {
          const s = srvlock.services!.compute!(ctx, o) as LockServer;
          if (ctx.ports.self.node === 1) server = s;
          return s;
        },
      },
    });
    const dead = srvlock.createClient(net.clientPorts({ node: 3, client: 0 }));
    const deadWaiter = srvlock.createClient(net.clientPorts({ node: 3, client: 1 }));
    const survivor = srvlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    const run = (async () => {
      await dead.acquire(5, 'exclusive'); // held, never released: node 3 dies holding it
      const queuedDead = deadWaiter.acquire(5, 'exclusive', { timeoutMs: 5 }).catch((e: unknown) => e);
      const waiting = survivor.acquire(5, 'exclusive', { timeoutMs: 2 }).catch((e: unknown) => e);
      await net.clock.sleep(0.5 * MS);
      if (fire) net.failures.fire(3);
      const survivorOutcome = await waiting;
      // After the notice node 3 is fenced: its new acquire is ignored, even of a free lock.
      const late = await dead.acquire(6, 'exclusive', { timeoutMs: 1 }).catch((e: unknown) => e);
      return { survivorOutcome, late, queuedDead: await queuedDead };
    })();
    return { net, run, server: () => server };
  }

  it('drops the dead machine’s hold and queued request, grants the survivor, and fences the dead machine', async () => {
    const { net, run, server } = scenario(true);
    await net.scheduler.run();
    const { survivorOutcome, late, queuedDead } = await run;
    expect(survivorOutcome).toMatchObject({ lock: 5, mode: 'exclusive' });
    expect(late).toBeInstanceOf(LockTimeoutError);
    expect(queuedDead).toBeInstanceOf(LockTimeoutError);
    expect(server()?.deadMachines).toStrictEqual([3]);
    expect(server()?.counters.droppedDead).toBe(2);
    expect(server()?.counters.fenced).toBeGreaterThan(0);
    expect(server()?.table.holders(6)).toStrictEqual([]);
    // Nothing of node 3 is left in the table.
    for (const lock of server()!.table.lockIds()) expect([...server()!.table.holders(lock), ...server()!.table.waiters(lock)].some((r) => r.machine === 3)).toBe(false);
    const grantsToDead = net.sent.filter((s) => s.from === 1 && s.packet.type === 'grant' && s.packet.dst === 3 && s.atNs > 0.5 * MS);
    expect(grantsToDead).toStrictEqual([]);
    await net.stopServices();
  });

  it('without the notice the survivor times out (the dead holder keeps the lock)', async () => {
    const { net, run } = scenario(false);
    await net.scheduler.run();
    const { survivorOutcome, late } = await run;
    expect(survivorOutcome).toBeInstanceOf(LockTimeoutError);
    expect(late).toMatchObject({ lock: 6 });
    await net.stopServices();
  });

  const spec = { clients: 9, locks: 3, readRatio: 0.3, distribution: 'uniform' as const, durationMs: 40, thinkNs: 20_000, criticalSectionNs: 200_000, seed: 3, timeoutMs: 5 };
  // The run's control plane (heartbeats, detection ticks) shares the schedule: at 12 ms the failing
  // node holds locks in every seed below (at 10 ms, since the control plane runs, it holds none in seed 3).
  const nodeFailure = { computeNode: 2, atMs: 12, detectionMs: 2 };

  it('sim run: survivors get every lock the failed node held soon after the notice, and the history passes', async () => {
    for (const seed of [3, 4, 7]) {
      const result = await runInMemory({ substrate: 'sim', protocol: srvlock, spec: { ...spec, seed }, computeNodes: 3, nodeFailure });
      expect(result.verdict.ok, `seed ${seed}`).toBe(true);
      expect(result.cutOff).toBe(false);
      const failure = result.nodeFailure!;
      const report = failureRecoveryReport(result.history.events(), failure.node, failure.failedAtNs);
      expect(report.heldByDead.length, `seed ${seed}: the failed node held locks`).toBeGreaterThan(0);
      expect(report.neverFreed, `seed ${seed}`).toStrictEqual([]);
      const detectionNs = failure.reportedAtNs - failure.failedAtNs;
      for (const [lock, afterNs] of report.firstSurvivorGrantAfterNs) {
        // Free once reported: granted within 1 ms of the notice, or of the first survivor asking after it.
        const demandNs = report.firstSurvivorDemandAfterNs.get(lock) ?? 0;
        expect(afterNs, `seed ${seed} lock ${lock}`).toBeLessThanOrEqual(Math.max(demandNs, detectionNs) + 1 * MS);
      }
    }
  });

  it('mutant: servers that ignore the notice leave the dead node’s locks held (caught by the report)', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: deaf, spec, computeNodes: 3, nodeFailure });
    const failure = result.nodeFailure!;
    const report = failureRecoveryReport(result.history.events(), failure.node, failure.failedAtNs);
    expect(report.heldByDead.length).toBeGreaterThan(0);
    expect(report.neverFreed).toStrictEqual(report.heldByDead);
  });
});
