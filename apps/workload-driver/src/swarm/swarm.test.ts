import { describe, expect, it } from 'vitest';
import { runSwarmSeed, swarmExitCode, swarmMix, withForcedFaults } from '@lockfabric/harness';
import type { SwarmSeedResult } from '@lockfabric/harness';
import { protocolById } from '@lockfabric/lock-catalog';

const caslock = protocolById('caslock');
const dslr = protocolById('dslr');
const shiftlock = protocolById('shiftlock');

describe('swarm mix', () => {
  it('is drawn from the seed alone: the same seed gives the same mix, another seed another one', () => {
    expect(swarmMix(dslr, 42)).toEqual(swarmMix(dslr, 42));
    expect(swarmMix(dslr, 42).description).not.toBe(swarmMix(dslr, 43).description);
  });

  it('gives every protocol the same workload for a seed and switches off the faults a profile does not claim', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const withFaults = swarmMix(dslr, seed);
      const plain = swarmMix(caslock, seed);
      expect({ ...plain.spec, readRatio: 0 }).toEqual({ ...withFaults.spec, readRatio: 0 });
      expect(plain.crashProbability).toBe(0);
      expect(plain.nodeFailure).toBeUndefined();
      expect(plain.switchFaults).toBeUndefined();
    }
    const drawn = Array.from({ length: 40 }, (_, i) => swarmMix(dslr, i + 1));
    expect(drawn.some((m) => m.crashProbability > 0)).toBe(true);
    expect(drawn.some((m) => m.nodeFailure !== undefined)).toBe(true);
    expect(drawn.some((m) => m.pauses.length > 0)).toBe(true);
    expect(drawn.some((m) => m.options['leaseNs'] !== undefined)).toBe(true);
  });

  it('lets the caller\'s options win over drawn ones', () => {
    expect(swarmMix(dslr, 7, { leaseNs: 3_000_000 }).options['leaseNs']).toBe(3_000_000);
  });
});

describe('swarm seed', () => {
  it('replays: the same seed gives the same history digest twice', async () => {
    const first = await runSwarmSeed(shiftlock, 11);
    const again = await runSwarmSeed(shiftlock, 11);
    expect(first.failure).toBeUndefined();
    expect(first.digest).not.toBe('');
    expect(again.digest).toBe(first.digest);
  });

  it('heal check: a protocol claiming to survive crashes it cannot recover from fails liveness (exit 3), not safety', async () => {
    // caslock has no lease and no repair: a crashed holder keeps its word set forever.
    const claimsCrashes = { ...caslock, swarm: { crashes: true } };
    // Seeds 1 and 3 leave a lock held by a crashed client (0.6 s of CPU together); seed 5 heals.
    // Seeds 2, 4 and 6 fail the same way but cost 2.5 s more, which took this test near its 20 s
    // timeout on a loaded machine; the bound below is generous, the verdict is the seeds'.
    const results: SwarmSeedResult[] = [];
    for (const seed of [1, 3, 5]) results.push(await runSwarmSeed(claimsCrashes, seed));
    const failed = results.filter((r) => r.failure);
    expect(failed.map((r) => r.seed)).toStrictEqual([1, 3]);
    expect(failed.every((r) => r.failure?.kind === 'liveness')).toBe(true);
    expect(failed[0]!.failure!.detail).toMatch(/after healing, locks .* not acquirable/);
    expect(failed[0]!.failure!.reproduce).toBe(`lockfabric check --swarm --protocol caslock --first-seed ${failed[0]!.seed} --seeds 1`);
    expect(swarmExitCode(results)).toBe(3);
  }, 120_000);

  it('safety check: a mutant that breaks exclusion fails safety (exit 1)', async () => {
    const results: SwarmSeedResult[] = [];
    for (let seed = 1; seed <= 10; seed++) results.push(await runSwarmSeed(caslock, seed, { mutantSkipCompare: true }));
    expect(results.some((r) => r.failure?.kind === 'safety')).toBe(true);
    expect(swarmExitCode(results)).toBe(1);
  });
});

describe('check --swarm --force-faults', () => {
  it('lists every unknown fault (exit 2) and turns a known one on in the printed mix', async () => {
    const { swarmCommand } = await import('./command.js');
    await expect(swarmCommand({ swarm: true, protocol: 'caslock', 'force-faults': 'bogus,flushed-verbs,nope' })).rejects.toMatchObject({
      issues: [expect.stringMatching(/unknown fault "bogus"/), expect.stringMatching(/unknown fault "nope"/)],
    });
    const forced = swarmMix(withForcedFaults(caslock, ['flushed-verbs']), 1);
    expect(forced.description).toMatch(/ flush=n\d@\d+us\+\d+us/);
    expect(swarmMix({ ...caslock, swarm: { ...caslock.swarm, flushedVerbs: false } }, 1).description).not.toMatch(/flush=/);
  });
});
