import { caslock } from '@lockfabric/lock-caslock';
import { describe, expect, it } from 'vitest';
import { swarmMix } from './case.js';
import { runSwarmSeed } from './run.js';

// A protocol's own sweep runs on the swarm's generator and judge, adding a workload change and a
// judge of its own promise (MCS's FIFO sweep does: libs/locks/mcs/tests/sim-sweep.test.ts).
describe('swarm seed extras', () => {
  it('the spec change reaches the run and the description, and a judge message is a safety failure', async () => {
    let seenTimeoutMs: number | undefined;
    const failed = await runSwarmSeed(caslock, 3, {}, {
      spec: { timeoutMs: 7 },
      judge: (_run, mix) => {
        seenTimeoutMs = mix.spec.timeoutMs;
        return 'promise broken';
      },
    });
    expect(seenTimeoutMs).toBe(7);
    expect(failed.description).toContain('test-spec={"timeoutMs":7}');
    expect(failed.failure).toMatchObject({ kind: 'safety', detail: 'promise broken' });
    // A judge that finds nothing leaves the seed as the plain swarm judges it.
    const plain = await runSwarmSeed(caslock, 3);
    const judged = await runSwarmSeed(caslock, 3, {}, { judge: () => undefined });
    expect(judged.failure).toBeUndefined();
    expect(judged.digest).toBe(plain.digest);
  });

  it('minColocatedClients puts that many clients on the memory node, unless the mix restarts it', async () => {
    // caslock's profile places nobody on the memory node; seed 2 draws no restart, seed 1 does.
    expect(swarmMix(caslock, 2).memoryRestart).toBeUndefined();
    expect(swarmMix(caslock, 1).memoryRestart).toBeDefined();
    const onMemoryNode = (history: readonly { readonly client: string }[]) => new Set(history.filter((e) => e.client.startsWith('0/')).map((e) => e.client)).size;
    let seen: number | undefined;
    const raised = await runSwarmSeed(caslock, 2, {}, { minColocatedClients: 2, judge: (run) => ((seen = onMemoryNode(run.history.events())), undefined) });
    expect(seen).toBe(2);
    expect(raised.description).toContain('test-colocated=2');
    const plain = await runSwarmSeed(caslock, 2, {}, { judge: (run) => ((seen = onMemoryNode(run.history.events())), undefined) });
    expect(seen).toBe(0);
    expect(plain.description).not.toContain('test-colocated');
    const restarted = await runSwarmSeed(caslock, 1, {}, { minColocatedClients: 2 });
    expect(restarted.description).not.toContain('test-colocated');
  });

  it('crashProbability replaces the drawn crash rate, whatever the profile claims', async () => {
    // caslock's profile claims no crashes: seed 2 runs crash-free unless the extras set a rate.
    let crashed: number | undefined;
    const judge = (run: { readonly crashed: ReadonlyMap<string, number> }) => ((crashed = run.crashed.size), undefined);
    const plain = await runSwarmSeed(caslock, 2, {}, { judge });
    expect(crashed).toBe(0);
    expect(plain.description).not.toContain('test-crash');
    // A crashed holder keeps its lock (caslock has no lease): a short heal budget keeps the probe brief.
    const crashing = await runSwarmSeed({ ...caslock, swarm: { ...caslock.swarm, healBudgetMs: 0.1 } }, 2, {}, { crashProbability: 0.05, spec: { timeoutMs: 0.2 }, judge });
    expect(crashed).toBeGreaterThan(0);
    expect(crashing.description).toContain('test-crash=0.05');
  });

  it('kill gives every seed a compute-node death at the stated detection delay, whatever the profile claims', async () => {
    // caslock's profile claims no kills: seed 2 runs without one unless the extras ask.
    let failed: { readonly failedAtNs: number; readonly reportedAtNs: number } | undefined;
    const judge = (run: { readonly nodeFailure?: { readonly failedAtNs: number; readonly reportedAtNs: number } }) => ((failed = run.nodeFailure), undefined);
    const brief = { ...caslock, swarm: { ...caslock.swarm, healBudgetMs: 0.1 } };
    const plain = await runSwarmSeed(brief, 2, {}, { judge });
    expect(failed).toBeUndefined();
    expect(plain.description).not.toContain('test-kill');
    const killed = await runSwarmSeed(brief, 2, {}, { kill: { detectionMs: 0.5 }, spec: { timeoutMs: 0.2 }, judge });
    expect(killed.description).toMatch(/test-kill=compute\d@[\d.]+ms\(detect 0.5ms\)/);
    expect(failed).toBeDefined();
    // Declared dead by the control plane: within one detection timeout of its last heartbeat.
    expect(failed!.reportedAtNs).toBeGreaterThan(failed!.failedAtNs);
    expect(failed!.reportedAtNs - failed!.failedAtNs).toBeLessThanOrEqual(0.5 * 1e6);
  });
});
