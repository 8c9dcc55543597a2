import { checkHistory } from '@lockfabric/check';
import { runInMemory, runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult, SwarmMix } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { mcs } from '../src/index.js';
import { sweepCase } from './sweep-params.js';

const SWARM_SEEDS = 200;
/** FAS order is arrival order at the NIC; invoke times may differ from it by the one-way jitter. */
const FIFO = { slackNs: 200 };
/** Waiters' local polling period varies by seed: it shifts when handovers are noticed. */
const POLL_NS = [250, 600, 1_500];

async function run(seed: number, protocolOptions: Record<string, number | boolean> = {}, crashProbability = 0, overrides: Partial<WorkloadSpec> = {}) {
  const c = sweepCase(seed, overrides);
  const result = await runInMemory({
    substrate: 'sim',
    protocol: mcs,
    // Two queue nodes per client, as MCS had before transactions needed 16: a client whose waits
    // were abandoned then has to wait for a free node, which the FIFO half of the sweep checks.
    protocolOptions: { pollIntervalNs: POLL_NS[seed % POLL_NS.length]!, queueNodes: 2, ...protocolOptions },
    spec: c.spec,
    computeNodes: c.computeNodes,
    colocatedClients: c.colocatedClients,
    ...(crashProbability > 0 ? { crashProbability } : {}),
  });
  const verdict = checkHistory(result.history, { failedClients: result.crashed, fifo: FIFO });
  return { c, result, verdict };
}

describe('mcs: simulation sweep', () => {
  // On the swarm's generator and judge (exclusion, liveness, heal probe) with no fault MCS's profile
  // claims — jitter, clock drift and coordinator crashes only — since FIFO is promised only there,
  // plus MCS's own judge: FIFO in swap order whenever no acquire gave up.
  const faultFree = { ...mcs, swarm: {} };
  const TIMEOUTS_MS = [0.01, 0.05, 5];
  it(`${SWARM_SEEDS} swarm seeds: mutual exclusion, every acquire completes or fails typed, FIFO while nobody gives up`, async () => {
    let timeouts = 0;
    let fifoSeeds = 0;
    let overtakesAfterGivingUp = 0;
    const judge = (run: InMemoryRunResult, mix: SwarmMix): string | undefined => {
      // FAS order is arrival order at the NIC: invoke times may differ from it by the one-way jitter.
      const verdict = checkHistory(run.history, { failedClients: run.crashed, fifo: { slackNs: FIFO.slackNs + mix.jitterNs } });
      const errors = verdict.liveness.counts.acquireErrors;
      const untyped = Object.keys(errors).filter((name) => name !== 'LockTimeoutError');
      if (untyped.length > 0) return `acquires failed with ${untyped.join(', ')}`;
      timeouts += errors.LockTimeoutError ?? 0;
      // A client whose earlier waits were abandoned may have to wait for a free queue node before
      // it can even join the queue; FIFO (in swap order) is promised when no acquire gave up.
      if (verdict.liveness.counts.acquiresFailed > 0) {
        overtakesAfterGivingUp += verdict.fifo?.totalOvertakes ?? 0;
        return undefined;
      }
      fifoSeeds++;
      const broken = verdict.fifo?.violations ?? [];
      return broken.length > 0 ? `FIFO: ${broken.length} overtakes, first ${JSON.stringify(broken[0])}` : undefined;
    };
    for (let seed = 1; seed <= SWARM_SEEDS; seed++) {
      // Two queue nodes per client, as MCS had before transactions needed 16: a client whose waits
      // were abandoned then has to wait for a free node, which the FIFO half of the sweep checks.
      const options = { pollIntervalNs: POLL_NS[seed % POLL_NS.length]!, queueNodes: 2 };
      const result = await runSwarmSeed(faultFree, seed, options, { spec: { timeoutMs: TIMEOUTS_MS[Math.floor(seed / 3) % 3]! }, judge });
      expect(result.failure, `${result.description}\n${result.failure?.detail}`).toBeUndefined();
    }
    // Both halves were exercised: waiters that give up while queued, and strict FIFO.
    expect(timeouts).toBeGreaterThan(200);
    expect(fifoSeeds).toBeGreaterThan(SWARM_SEEDS / 4);
    // And the FIFO check is not vacuous at this slack: it does see the overtakes that waiting for
    // a free queue node allows.
    expect(overtakesAfterGivingUp).toBeGreaterThan(0);
  }, 120_000);

  it('without the coordinator-driven recovery (not run in this sweep) a crashed holder blocks its queue, and the rest fail only with typed errors', async () => {
    let failed = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { result, verdict } = await run(seed, {}, 0.02, { timeoutMs: 0.05 });
      expect(result.cutOff, `seed ${seed}`).toBe(false);
      expect(verdict.violations, `seed ${seed}`).toEqual([]);
      expect(verdict.liveness.ok, `seed ${seed}`).toBe(true);
      failed += verdict.liveness.counts.acquiresFailed;
    }
    expect(failed).toBeGreaterThan(0);
  }, 60_000);
});

describe('mcs: the mutant is caught', () => {
  // On the swarm runner (one generator of seeds and faults, one checker path for every protocol).
  it('reusing a queue node without clearing it breaks exclusion within a few swarm seeds', async () => {
    let caught: number | undefined;
    for (let seed = 1; seed <= 30 && caught === undefined; seed++) {
      if ((await runSwarmSeed(mcs, seed, { mutantSkipNodeReset: true })).failure?.kind === 'safety') caught = seed;
    }
    expect(caught).toBeDefined();
  });
});

describe('mcs: embedded substrate', () => {
  it('runs the same code in real time and passes the checker', async () => {
    const result = await runInMemory({
      substrate: 'embedded',
      protocol: mcs,
      spec: { clients: 4, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 120, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 3, timeoutMs: 5_000 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(120);
  });
});
