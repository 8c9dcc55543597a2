import { runInMemory } from '@lockfabric/harness';
import { LockAbortedError, LockTimeoutError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { alock } from '../src/index.js';
import { checkAlockEvents } from './support/invariants.js';
import { scriptedSim } from './support/scripted.js';

const LOCK = 1;

describe('alock: timeouts and aborts', () => {
  it('a waiter that times out keeps its queue place and passes the lock on; the caller gets LockTimeoutError', async () => {
    const sim = scriptedSim();
    const [nodeA, nodeB] = [sim.computeNodes[0]!, sim.computeNodes[1]!];
    const holder = sim.client({ node: nodeA, client: 0 });
    const quitter = sim.client({ node: nodeB, client: 1 });
    const next = sim.client({ node: nodeA, client: 2 });
    const tasks = [
      sim.at(0, async () => {
        const grant = await holder.acquire(LOCK, 'exclusive');
        await sim.cluster.clock.sleep(100_000);
        await holder.release(grant);
        return 'held';
      }),
      sim.at(10_000, async () => {
        const error = await quitter.acquire(LOCK, 'exclusive', { timeoutMs: 0.02 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockTimeoutError);
        // Later, with the lock free again, the same client acquires normally.
        await sim.cluster.clock.sleep(200_000);
        const grant = await quitter.acquire(LOCK, 'exclusive');
        await quitter.release(grant);
        return grant.entryKind;
      }),
      sim.at(40_000, async () => {
        const grant = await next.acquire(LOCK, 'exclusive');
        await next.release(grant);
        return grant.entryKind;
      }),
    ];
    expect(await sim.run(tasks)).toEqual(['held', 'leader', 'passed']);
    const quitterSteps = sim.events.filter((e) => e.ref === sim.events.find((f) => f.type === 'abandon')?.ref).map((e) => e.type);
    expect(quitterSteps.slice(0, 6)).toEqual(['swap', 'link', 'abandon', 'enter', 'exit', 'handoff']);
    expect(checkAlockEvents(sim.events, { localBudget: 5, remoteBudget: 5 }).violations).toEqual([]);
  });

  it('an abort signal ends a queued acquire with LockAbortedError, for local and remote clients', async () => {
    const sim = scriptedSim();
    const holder = sim.client({ node: sim.home, client: 0 });
    const waiters = [sim.client({ node: sim.home, client: 1 }), sim.client({ node: sim.computeNodes[0]!, client: 2 })];
    const tasks = [
      sim.at(0, async () => {
        const grant = await holder.acquire(LOCK, 'exclusive');
        await sim.cluster.clock.sleep(50_000);
        await holder.release(grant);
        return 'held';
      }),
      ...waiters.map((waiter) =>
        sim.at(1_000, async () => {
          const controller = new AbortController();
          const pending = waiter.acquire(LOCK, 'exclusive', { signal: controller.signal }).catch((e: unknown) => e);
          await sim.cluster.clock.sleep(10_000);
          controller.abort('test says stop');
          const error = await pending;
          return error instanceof LockAbortedError ? error.reason : String(error);
        }),
      ),
    ];
    expect(await sim.run(tasks)).toEqual(['held', 'test says stop', 'test says stop']);
    expect(checkAlockEvents(sim.events, { localBudget: 5, remoteBudget: 5 }).violations).toEqual([]);
  });

  it('with all sixteen descriptors still queued, a seventeenth acquire times out without enqueueing', async () => {
    const sim = scriptedSim();
    const holder = sim.client({ node: sim.computeNodes[0]!, client: 0 });
    const quitter = sim.client({ node: sim.computeNodes[1]!, client: 1 });
    const tasks = [
      sim.at(0, async () => {
        const grant = await holder.acquire(LOCK, 'exclusive');
        await sim.cluster.clock.sleep(2_000_000); // past all 16 timeouts below
        await holder.release(grant);
        return 'held';
      }),
      sim.at(10_000, async () => {
        const outcomes: string[] = [];
        for (const lock of [...Array.from({ length: 16 }, () => LOCK), 2]) {
          const error = await quitter.acquire(lock, 'exclusive', { timeoutMs: 0.02 }).catch((e: unknown) => e);
          outcomes.push(error instanceof LockTimeoutError ? 'timeout' : String(error));
        }
        return outcomes.join(',');
      }),
    ];
    expect(await sim.run(tasks)).toEqual(['held', Array.from({ length: 17 }, () => 'timeout').join(',')]);
    const swaps = sim.events.filter((e) => e.type === 'swap' && e.ref !== sim.events[0]!.ref);
    expect(swaps.map((e) => e.lock)).toEqual(Array.from({ length: 16 }, () => LOCK)); // lock 2 was never touched
    expect(sim.events.filter((e) => e.type === 'abandon')).toHaveLength(16);
    expect(checkAlockEvents(sim.events, { localBudget: 5, remoteBudget: 5 }).violations).toEqual([]);
  });
});

describe('alock: client crashes without the coordinator-driven recovery (spec A17)', () => {
  it('a holder that crashes blocks its lock, yet every acquire of a live client completes or fails with a typed error', async () => {
    for (const seed of [1, 2, 3]) {
      const result = await runInMemory({
        substrate: 'sim',
        protocol: alock,
        spec: { clients: 6, locks: 3, readRatio: 0.3, distribution: 'uniform', operations: 120, thinkNs: 300, criticalSectionNs: 500, seed, timeoutMs: 0.05 },
        colocatedClients: 3,
        crashProbability: 0.05,
      });
      expect(result.crashed.size, `seed ${seed}`).toBeGreaterThan(0);
      expect(result.verdict.violations).toEqual([]);
      expect(result.verdict.liveness.ok).toBe(true);
      expect(result.cutOff).toBe(false);
    }
  });
});
