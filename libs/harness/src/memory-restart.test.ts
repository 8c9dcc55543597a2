import { caslock } from '@lockfabric/lock-caslock';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';
import { swarmMix } from './swarm/case.js';
import { runSwarmSeed } from './swarm/run.js';

// A memory node that restarts mid-run comes back with an empty table under a new incarnation. Holds
// granted on the lost table end TABLE_LOST (their release is refused, never applied to the new
// table), acquires during the outage fail FABRIC_ACCESS and back off, and the run goes on.
const US = 1_000;
// Holds (10 ms) outlast the clients' first backoff (1–2 ms), so a hold on the lost table is
// usually still on when another client is granted on the new one.
const spec = { clients: 4, locks: 1, readRatio: 0, distribution: 'uniform', operations: 24, thinkNs: 100 * US, criticalSectionNs: 10_000 * US, timeoutMs: 50 } as const;
const restart = { atMs: 15, downMs: 0.1 } as const;
const options = { variant: 'exclusive' } as const;

describe('sim: a memory node restarts within the run', () => {
  it('caslock: holds on the lost table end TABLE_LOST, outage acquires fail FABRIC_ACCESS, the run goes on and is safe', async () => {
    const r = await runInMemory({ substrate: 'sim', protocol: caslock, protocolOptions: options, spec: { ...spec, seed: 5 }, computeNodes: 2, memoryRestart: restart, heal: { budgetMs: 50 } });
    expect(r.memoryRestart?.incarnation).toBe(2);
    const codes = r.summary.failuresByCode;
    expect(codes['TABLE_LOST']).toBeGreaterThanOrEqual(1);
    expect(codes['FABRIC_ACCESS']).toBeGreaterThanOrEqual(1);
    const restartedAt = r.memoryRestart!.restartedAtNs;
    const grantedAfter = r.history.events().filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > restartedAt);
    expect(grantedAfter.length).toBeGreaterThan(10);
    expect(r.verdict.ok, r.verdict.violations.map((v) => JSON.stringify(v)).join('\n')).toBe(true);
    expect(r.heal?.stuck).toStrictEqual([]);
  });

  it('mutant: without the incarnation fence a stale release frees the lock on the new table and exclusion breaks', async () => {
    for (let seed = 1; seed <= 3; seed++) {
      const run = (mutantUnfenced: boolean) => runInMemory({ substrate: 'sim', protocol: caslock, protocolOptions: options, spec: { ...spec, seed }, computeNodes: 2, memoryRestart: { ...restart, mutantUnfenced } });
      expect((await run(false)).verdict.ok, `seed ${seed} fenced`).toBe(true);
      expect((await run(true)).verdict.violations.length, `seed ${seed} unfenced`).toBeGreaterThan(0);
    }
  });

  it('swarm: a profile with memoryRestart draws restarts without moving any other draw', async () => {
    const withRestart = { ...caslock, swarm: { ...caslock.swarm, memoryRestart: true } };
    const without = { ...caslock, swarm: { ...caslock.swarm, memoryRestart: false } };
    let restarts = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const a = swarmMix(withRestart, seed);
      const b = swarmMix(without, seed);
      if (a.memoryRestart) restarts++;
      expect(b.memoryRestart).toBeUndefined();
      expect(a.description.replace(/ memory=restart@\S+/, '')).toBe(b.description);
    }
    expect(restarts).toBeGreaterThan(4);
    // Seed 1 restarts the memory node; the same seed gives the same history twice, and it passes.
    const first = await runSwarmSeed(withRestart, 1);
    const again = await runSwarmSeed(withRestart, 1);
    expect(first.description).toMatch(/memory=restart@/);
    expect(first.failure).toBeUndefined();
    expect(again.digest).toBe(first.digest);
  });
});
