import { caslock } from '@lockfabric/lock-caslock';
import { describe, expect, it } from 'vitest';
import { runSwarmMix, swarmMix, swarmReproduction, withForcedFaults } from './swarm/index.js';

describe('swarm: lost completions (flushed-verbs)', () => {
  const forced = withForcedFaults(caslock, ['flushed-verbs']);
  // caslock claims the fault itself now: the "off" side is its profile without it.
  const unclaimed = { ...caslock, swarm: { ...caslock.swarm, flushedVerbs: false } };

  it('is drawn only where the profile claims it, and moves no other draw', () => {
    let drawn = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const on = swarmMix(forced, seed);
      const off = swarmMix(unclaimed, seed);
      expect(off.flushedVerbs).toBeUndefined();
      if (on.flushedVerbs) drawn++;
      expect(on.description.replace(/ flush=\S+/, '')).toBe(off.description);
    }
    expect(drawn).toBeGreaterThan(5);
    expect(drawn).toBeLessThan(25);
  });

  it('flushes verbs in flight, some run and some not, and replays to the same digest', async () => {
    const seeds = Array.from({ length: 12 }, (_, i) => i + 1).filter((seed) => swarmMix(forced, seed).flushedVerbs);
    let flushed = 0;
    let ran = 0;
    for (const seed of seeds.slice(0, 4)) {
      const mix = swarmMix(forced, seed);
      const first = await runSwarmMix(forced, mix);
      flushed += first.flushedVerbs?.flushed ?? 0;
      ran += first.flushedVerbs?.ran ?? 0;
      expect(first.verdict.violations).toEqual([]);
      expect((await runSwarmMix(forced, mix)).digest).toBe(first.digest);
    }
    expect(ran).toBeGreaterThan(0);
    expect(flushed).toBeGreaterThan(ran);
  });

  it('a reproduction line carries the forced faults', () => {
    expect(swarmReproduction('mcs', 25, {}, ['flushed-verbs'])).toBe('lockfabric check --swarm --protocol mcs --first-seed 25 --seeds 1 --force-faults flushed-verbs');
  });
});
