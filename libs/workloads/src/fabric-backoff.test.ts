import { HistoryRecorder } from '@lockfabric/check';
import { FabricAccessError, NS_PER_MS } from '@lockfabric/ports';
import type { Grant, LockClient, TableBinding } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { TestRandom } from '../tests/support/seeded-random.js';
import { VirtualTime } from '../tests/support/virtual-time.js';
import { RunStats } from './results.js';
import { FABRIC_BACKOFF, FabricBackoff, runClientLoop, stopAfter } from './runner.js';
import type { WorkloadSpec } from './spec.js';

const spec: WorkloadSpec = { clients: 1, locks: 2, readRatio: 0, distribution: 'uniform', thinkNs: 1_000, criticalSectionNs: 1_000, seed: 5, durationMs: 2_000 };

/** A memory node that is down: every acquire fails at once, as a down queue pair answers. */
const downClient: LockClient = {
  acquire: () => Promise.reject(new FabricAccessError('unreachable', 'memory node 0 is down')),
  release: () => Promise.resolve(),
};

describe('FabricBackoff', () => {
  it('doubles from the initial bound to the cap, each delay in [bound/2, bound)', () => {
    const backoff = new FabricBackoff(new TestRandom(1), { initialNs: 4, maxNs: 32 });
    const bounds = [4, 8, 16, 32, 32, 32];
    for (const bound of bounds) {
      const delay = backoff.nextDelayNs();
      expect(delay).toBeGreaterThanOrEqual(bound / 2);
      expect(delay).toBeLessThan(bound);
    }
    backoff.reset();
    expect(backoff.nextDelayNs()).toBeLessThan(4);
  });
});

describe('runClientLoop while a memory node is down', () => {
  it('backs off on fabric failures: failures in 2 s stay within the ramp plus one per half cap', async () => {
    const time = new VirtualTime();
    const stats = new RunStats();
    const result = await time.run(
      runClientLoop({ client: downClient, ports: { self: { node: 1, client: 0 }, clock: time.clock, random: new TestRandom(9) }, spec, recorder: new HistoryRecorder(), stats, shouldStop: stopAfter(time.clock, spec.durationMs) }),
    );
    // Ramp 2→200 ms is 8 delays; after it each delay is at least maxNs/2 = 100 ms.
    const rampSteps = Math.ceil(Math.log2(FABRIC_BACKOFF.maxNs / FABRIC_BACKOFF.initialNs)) + 1;
    const bound = rampSteps + Math.ceil((spec.durationMs! * NS_PER_MS) / (FABRIC_BACKOFF.maxNs / 2));
    expect(result.acquireFailures).toBeGreaterThan(0);
    expect(result.acquireFailures).toBeLessThanOrEqual(bound);
    // Without the backoff the loop would fail once per think time: 2 s / 1 µs.
    expect(stats.failuresByCode.get('FABRIC_ACCESS')).toBe(result.acquireFailures);
  });

  it('reports a release whose table was lost as TableLostError, and follows the tables before each acquire', async () => {
    const time = new VirtualTime();
    let follows = 0;
    let lostNow = false;
    const tables: TableBinding = { follow: () => void follows++, lost: () => lostNow, settle: () => Promise.resolve(lostNow) };
    const client: LockClient = {
      acquire: (lock, mode) => Promise.resolve<Grant>({ lock, mode }),
      release: () => {
        lostNow = true;
        return Promise.reject(new FabricAccessError('unreachable', 'table lost: memory node 0 restarted'));
      },
    };
    const recorder = new HistoryRecorder();
    const stats = new RunStats();
    const result = await time.run(
      runClientLoop({ client, ports: { self: { node: 1, client: 0 }, clock: time.clock, random: new TestRandom(3), tables }, spec: { ...spec, durationMs: undefined, operations: 3 }, recorder, stats, shouldStop: () => false, opsBudget: 3 }),
    );
    expect(result.releaseFailures).toBe(3);
    expect(follows).toBe(3);
    const errors = recorder.events().filter((e) => e.op === 'release' && e.phase === 'fail').map((e) => e.error);
    expect(errors).toStrictEqual(['TableLostError', 'TableLostError', 'TableLostError']);
    expect(stats.failuresByCode.get('TABLE_LOST')).toBe(3);
  });
});
