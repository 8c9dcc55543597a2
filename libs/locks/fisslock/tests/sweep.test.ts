import { describe, expect, it } from 'vitest';
import { LockTimeoutError } from '@lockfabric/ports';
import { runSeed } from './support/sweep.js';
import { fissSim } from './support/fiss-sim.js';
import { expectEnd } from './support/wide-sweep.js';

describe('fisslock seed sweep', () => {
  it('500 seeds without faults: exclusion holds, every acquire is granted, one agent per lock, agent mode = decider mode, every lock free and consistent at the end', async () => {
    for (let seed = 1; seed <= 500; seed++) {
      const r = await runSeed(seed, { ops: 6 });
      expect(r.violations).toEqual([]);
      expect(r.failed + r.untyped).toBe(0);
      expect(r.agentsPerLockMax).toBeLessThanOrEqual(1);
      expect(r.modeMismatch).toBe(0);
      expectEnd(`seed ${seed}`, r.endState, true);
    }
  }, 60_000);
});

describe('fisslock anomalies', () => {
  it('lost switch ① GRANT: the attempt times out, the abort RELEASE from the agent machine frees the lock at the switch', async () => {
    const sim = fissSim({ faults: { rules: [{ packetTypes: ['grant'], loss: 1 }] } });
    const [a] = sim.nodes as [number];
    const p = sim.client(a, 0).acquire(0, 'exclusive', { timeoutMs: 15 }).catch((e: unknown) => e);
    await sim.scheduler.run({ untilNs: 100_000_000 });
    expect(await p).toBeInstanceOf(LockTimeoutError);
    expect(sim.sw.counters().decisions['timeout-free']).toBeGreaterThanOrEqual(1);
    expect(sim.decider.meta(0)).toMatchObject({ free: true, mid: undefined });
    expect(sim.pool(a).liveAgents().length).toBe(0);
  });
});
