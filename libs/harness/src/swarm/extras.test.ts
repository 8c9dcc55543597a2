import { caslock } from '@lockfabric/lock-caslock';
import { fisslock } from '@lockfabric/lock-fisslock';
import type { SwarmEndView } from '@lockfabric/locks-common';
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

describe('swarm seed: switch fault rate and the protocol invariants hook', () => {
  it('switchFaultRate replaces the drawn switch faults with that rate of every kind on both links', async () => {
    // FissLock's profile draws switch faults; seed 1 draws none, so the knob alone puts them there.
    expect(swarmMix(fisslock, 1).switchFaults).toBeUndefined();
    let seen: unknown;
    const judge = (_run: unknown, mix: { readonly switchFaults?: unknown }) => ((seen = mix.switchFaults), undefined);
    const plain = await runSwarmSeed(fisslock, 1, {}, { judge });
    expect(seen).toBeUndefined();
    const faulty = await runSwarmSeed(fisslock, 1, {}, { switchFaultRate: 0.1, judge });
    expect(seen).toEqual({ rules: [expect.objectContaining({ direction: 'both', loss: 0.1, duplicate: 0.1, reorder: 0.1, delay: 0.1 })] });
    expect(faulty.description).toContain('test-switch=both@0.1');
    // The faults reach the run: its history differs from the clean one.
    expect(faulty.digest).not.toBe(plain.digest);
    await expect(runSwarmSeed(fisslock, 1, {}, { switchFaultRate: 1.5 })).rejects.toThrow(RangeError);
  });

  it('a line from the profile’s invariants is a safety failure with the reproduction; the hook sees the live node services', async () => {
    // Seed 2 kills compute node 1 (node id 2): its agent pool is gone by the end, the others are handed over.
    let services: number[] | undefined;
    const broken = { ...fisslock, swarm: { ...fisslock.swarm, invariants: async (end: SwarmEndView) => ((services = [...end.computeServices.keys()]), ['agent left behind']) } };
    const r = await runSwarmSeed(broken, 2);
    expect(r.description).toContain('kill=compute1@');
    expect(services).toEqual([1, 3]);
    expect(r.failure).toMatchObject({ kind: 'safety', reproduce: 'lockfabric check --swarm --protocol fisslock --first-seed 2 --seeds 1' });
    expect(r.failure?.detail).toContain('agent left behind');
    // Nothing found: the seed is judged as before, same history.
    const quiet = await runSwarmSeed({ ...fisslock, swarm: { ...fisslock.swarm, invariants: async () => [] } }, 2);
    expect(quiet.failure).toBeUndefined();
    expect(quiet.digest).toBe(r.digest);
  });
});
