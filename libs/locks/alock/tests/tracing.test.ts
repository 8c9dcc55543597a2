import { describe, expect, it } from 'vitest';
import type { AlockClient } from '../src/index.js';
import { RecordingTrace } from './support/recording-trace.js';
import { scriptedSim } from './support/scripted.js';
import { verbDelta, verbTable } from './support/verb-tally.js';

describe('alock: lock.handover spans', () => {
  it('the releaser’s handover span (child of its acquire span) is linked from the next holder’s acquire span, in both cohorts', async () => {
    const trace = new RecordingTrace();
    const sim = scriptedSim({ trace });
    const pairs: [AlockClient, AlockClient][] = [
      [sim.client({ node: sim.computeNodes[0]!, client: 0 }), sim.client({ node: sim.computeNodes[1]!, client: 1 })],
      [sim.client({ node: sim.home, client: 2 }), sim.client({ node: sim.home, client: 3 })],
    ];
    let handoverVerbs = {};
    const tasks = pairs.flatMap(([first, second], i) => {
      const lock = i; // the remote pair on lock 0, the local pair on lock 1
      return [
        sim.at(0, async () => {
          const grant = await first.acquire(lock, 'exclusive');
          await sim.cluster.clock.sleep(30_000);
          const before = verbTable(sim.cluster);
          await first.release(grant);
          if (i === 0) handoverVerbs = verbDelta(before, verbTable(sim.cluster));
          return grant.entryKind;
        }),
        sim.at(5_000, async () => {
          const grant = await second.acquire(lock, 'exclusive');
          await second.release(grant);
          return grant.entryKind;
        }),
      ];
    });
    expect(await sim.run(tasks)).toEqual(['leader', 'passed', 'leader', 'passed']);
    const acquires = trace.spans.filter((s) => s.name === 'lock.acquire');
    const handovers = trace.spans.filter((s) => s.name === 'lock.handover');
    expect(handovers).toHaveLength(2);
    for (const handover of handovers) {
      expect(handover.ended).toBe(true);
      const releaserAcquire = acquires.find((s) => s.context.spanId === handover.parent?.spanId);
      expect(releaserAcquire?.attributes['lockfabric.alock.entry']).toBe('leader');
      const receiver = acquires.find((s) => s.links.some((l) => l.context.spanId === handover.context.spanId));
      expect(receiver?.attributes['lockfabric.alock.entry']).toBe('passed');
      expect(receiver?.links[0]?.context).toEqual(handover.context);
    }
    // With tracing on, a remote hand-off carries the context in a second WRITE of the same doorbell.
    expect(handoverVerbs).toEqual({ [String(sim.computeNodes[1])]: { write: 2 } });
  });
});
