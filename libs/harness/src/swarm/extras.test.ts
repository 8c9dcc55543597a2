import { caslock } from '@lockfabric/lock-caslock';
import { describe, expect, it } from 'vitest';
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
});
