import { caslock } from '@lockfabric/lock-caslock';
import { fisslock } from '@lockfabric/lock-fisslock';
import { netlock } from '@lockfabric/lock-netlock';
import type { SwarmEndView } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { forcedKill, forcedOutage, outageOverKill, swarmMix } from './case.js';
import type { SwarmMix } from './case.js';
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

// A compute node that dies while the coordinator is down is declared dead only by the restarted
// instance, which never heard it: it learns the members its predecessor published from a
// survivor's newest view (libs/control view-recall.ts). The swarm draws that case itself.
describe('swarm seed: a kill inside a coordinator outage', () => {
  /** Whether the mix's crash covers its kill: the node dies in the outage, or at most one detection timeout before it. */
  const covered = (mix: SwarmMix) => {
    const kill = mix.nodeFailure;
    const crash = mix.coordinatorCrash;
    return !!kill && !!crash && kill.atMs >= crash.atMs - kill.detectionMs! && kill.atMs < crash.atMs + crash.downMs;
  };
  type Observed = { readonly reportedAtNs?: number; readonly purges: number; readonly lives: number };
  const observe = (sink: { seen?: Observed }) => (run: { readonly nodeFailure?: { readonly reportedAtNs: number }; readonly control?: { readonly counts: Readonly<Record<string, number>>; readonly lives: readonly unknown[] } }) => {
    sink.seen = { ...(run.nodeFailure ? { reportedAtNs: run.nodeFailure.reportedAtNs } : {}), purges: run.control?.counts['netlockPurges'] ?? 0, lives: run.control?.lives.length ?? 0 };
    return undefined;
  };

  it('an outage over a kill covers the death or its detection, from the start of the run at the earliest', () => {
    const kill = { computeNode: 0, atMs: 0.3, detectionMs: 0.1 };
    expect(outageOverKill(kill, 2, 0)).toEqual({ atMs: 0.4, downMs: 2 }); // dead 0.1 ms before the crash
    expect(outageOverKill(kill, 2, 1)).toEqual({ atMs: 0, downMs: 2 }); // before the first view, even at the start
    expect(outageOverKill({ ...kill, atMs: 3 }, 2, 1).atMs).toBeCloseTo(1.0, 9);
  });

  it('the draw places a share of coordinator crashes over the drawn kill (NetLock, seeds 1-200)', () => {
    const mixes = Array.from({ length: 200 }, (_, i) => swarmMix(netlock, i + 1));
    const over = mixes.filter(covered).map((m) => m.seed);
    const crashesWithKill = mixes.filter((m) => m.coordinatorCrash && m.nodeFailure).length;
    expect(over.length).toBeGreaterThanOrEqual(5);
    expect(over.length).toBeLessThan(crashesWithKill);
    expect(over).toContain(10);
    // Some crash before the first view (one detection timeout in): only the expected members declare those kills.
    expect(mixes.filter(covered).filter((m) => m.coordinatorCrash!.atMs < m.nodeFailure!.detectionMs!).length).toBeGreaterThanOrEqual(1);
  });

  it('NetLock seed 10: the node dies as the coordinator crashes; the restarted one declares it dead and the purge runs', async () => {
    const mix = swarmMix(netlock, 10);
    expect(covered(mix)).toBe(true);
    const sink: { seen?: Observed } = {};
    const r = await runSwarmSeed(netlock, 10, {}, { judge: observe(sink) });
    expect(r.failure).toBeUndefined();
    const restartNs = (mix.coordinatorCrash!.atMs + mix.coordinatorCrash!.downMs) * 1e6;
    expect(sink.seen?.lives).toBe(2);
    // Declared by the second life, one detection timeout (plus a tick and the bus) after its start.
    expect(sink.seen?.reportedAtNs).toBeGreaterThanOrEqual(restartNs + mix.nodeFailure!.detectionMs! * 1e6);
    expect(sink.seen?.purges).toBeGreaterThanOrEqual(1);
  });

  it('kill.inOutage puts the coordinator down over the forced kill, whatever the mix drew; the death is declared and purged', async () => {
    const sink: { seen?: Observed } = {};
    const r = await runSwarmSeed(netlock, 2, {}, { kill: { detectionMs: 0.2, inOutage: true }, judge: observe(sink) });
    const kill = forcedKill(2, swarmMix(netlock, 2).spec, 0.2);
    const crash = forcedOutage(2, kill);
    expect(r.description).toContain(`test-outage=crash@${crash.atMs.toFixed(2)}ms+${crash.downMs.toFixed(2)}ms`);
    expect(covered({ ...swarmMix(netlock, 2), nodeFailure: kill, coordinatorCrash: crash })).toBe(true);
    expect(r.failure).toBeUndefined();
    expect(sink.seen?.reportedAtNs).toBeGreaterThanOrEqual((crash.atMs + crash.downMs + 0.2) * 1e6);
    expect(sink.seen?.purges).toBeGreaterThanOrEqual(1);
  });
});
