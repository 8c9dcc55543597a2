import { fromBinary, toBinary, create } from '@bufbuild/protobuf';
import type { Clock } from '@lockfabric/ports';
import { RunResultSchema } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { PhaseTiming } from './phase-timing.js';
import { mergePhaseTimingFromWire, phaseTimingToWire } from './phase-wire.js';

/** A clock the test moves by hand. */
function manualClock(): Clock & { advance(ns: number): void } {
  let now = 0;
  return { nowNs: () => now, sleep: async () => undefined, advance: (ns: number) => void (now += ns) } as unknown as Clock & { advance(ns: number): void };
}

/** One node's timing: `n` exclusive acquires of 100 ns initial atomic + 300 ns waiting, and one reset of 50 ns. */
async function nodeTiming(n: number): Promise<PhaseTiming> {
  const timing = new PhaseTiming();
  const clock = manualClock();
  const { marks, wrap } = timing.forClient(clock);
  const client = wrap({
    acquire: async (lock, mode) => {
      marks.enter('initial-atomic');
      clock.advance(100);
      marks.enter('wait-predecessor');
      clock.advance(300);
      return { lock, mode };
    },
    release: async () => undefined,
  });
  for (let i = 0; i < n; i++) await client.acquire(i, 'exclusive');
  marks.resetBegin(1);
  clock.advance(50);
  marks.resetEnd(1, 'done');
  return timing;
}

describe('phase and reset totals on the wire', () => {
  it('survive a RunResult round trip, and two nodes merge into their sum', async () => {
    const merged = new PhaseTiming();
    for (const n of [2, 3]) {
      const wire = fromBinary(RunResultSchema, toBinary(RunResultSchema, create(RunResultSchema, phaseTimingToWire(await nodeTiming(n)))));
      mergePhaseTimingFromWire(merged, wire.phaseTotals, wire.resets);
    }
    expect(merged.totals['acquire-exclusive']).toEqual({ operations: 5, ns: { 'initial-atomic': 500, 'wait-predecessor': 1500 } });
    expect(merged.meansUs()).toEqual({ 'acquire-exclusive': { operations: 5, us: { 'initial-atomic': 0.1, 'wait-predecessor': 0.3 } } });
    expect(merged.resets).toEqual({ count: 2, totalNs: 100, maxNs: 50, finishedElsewhere: 0 });
  });

  it('kinds without operations are left out', async () => {
    expect(Object.keys(phaseTimingToWire(await nodeTiming(1)).phaseTotals)).toEqual(['acquire-exclusive']);
  });
});
