import { describe, expect, it } from 'vitest';
import { dslr } from '@lockfabric/lock-dslr';
import type { HistoryEvent } from '@lockfabric/check';
import { dslrBackoff } from '../src/index.js';
import { checkConflictFcfs } from '@lockfabric/check';
import { ResetCounter, checkSeed, hotSwarmCase, runInMemory, swarmCase } from '@lockfabric/harness';
import type { SwarmDraw } from '@lockfabric/harness';

const SEEDS = 500;
/** DSLR+ always paces with its backoff: no busy polling. */
const DRAW: SwarmDraw = { busyPolling: false };

describe('dslr-backoff: simulation sweep', () => {
  it(`${SEEDS} seeds of swarm runs: no violation, typed failures only, FCFS and zero CAS when fault-free`, async () => {
    const resets = new ResetCounter();
    const findings: string[] = [];
    let aborts = 0;
    let crashRuns = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const swarm = swarmCase(seed, {}, DRAW);
      const found = await checkSeed(dslrBackoff, swarm, resets);
      if (found.problems.length > 0) findings.push(`seed ${seed} ${JSON.stringify(swarm.options)}: ${found.problems.join('; ')}`);
      aborts += found.aborts;
      if (swarm.crashProbability > 0) crashRuns++;
    }
    expect(findings).toEqual([]);
    expect(crashRuns).toBeGreaterThan(100);
    expect(aborts).toBeGreaterThan(0);
    for (const cause of ['skip', 'resetter-zero', 'frozen-watchdog-zero']) expect(resets.causes[cause] ?? 0, cause).toBeGreaterThan(0);
  }, 240_000);

  it('polls more often than DSLR’s wait estimate but less than busy polling', async () => {
    const spec = { clients: 10, locks: 1, readRatio: 0.3, distribution: 'uniform' as const, operations: 200, thinkNs: 1_000, criticalSectionNs: 5_000, seed: 9 };
    const plus = await runInMemory({ substrate: 'sim', protocol: dslrBackoff, spec });
    const paced = await runInMemory({ substrate: 'sim', protocol: dslr, spec });
    const busy = await runInMemory({ substrate: 'sim', protocol: dslr, protocolOptions: { polling: 'busy' }, spec });
    expect(plus.verdict.ok).toBe(true);
    // One FAA per acquire; releases are fenced CAS (the paper's FAA release is `paperLiteralFaaRelease`).
    expect(plus.verbs['faa']).toBe(200);
    expect(plus.verbs['read']!).toBeGreaterThan(paced.verbs['read']!);
    expect(plus.verbs['read']!).toBeLessThan(busy.verbs['read']!);
  });
});

describe('dslr-backoff: mutants', () => {
  it('the FCFS checker copy fails on an overtaking writer', () => {
    const ev = (client: string, mode: 'shared' | 'exclusive', phase: 'invoke' | 'ok', timeNs: number): HistoryEvent => ({ client, lock: 0, mode, op: 'acquire', phase, timeNs });
    const history = [ev('a', 'shared', 'invoke', 0), ev('b', 'exclusive', 'invoke', 5_000), ev('b', 'exclusive', 'ok', 6_000), ev('a', 'shared', 'ok', 20_000)];
    expect(checkConflictFcfs(history, { slackNs: 1_000 }).ok).toBe(false);
  });

  it('A1 (paper shared check) makes readers abort in crash-free runs within 40 seeds', async () => {
    let found: string[] = [];
    for (let seed = 1; seed <= 40 && found.length === 0; seed++) found = (await checkSeed(dslrBackoff, swarmCase(seed, { paperLiteralSharedCheck: true }, DRAW))).problems;
    expect(found.join(' ')).toMatch(/aborts in a crash-free run/);
  }, 120_000);

  it('A4 (zero after skip) violates exclusion within 40 hot seeds', async () => {
    let found: string[] = [];
    for (let seed = 1; seed <= 40 && found.length === 0; seed++) found = (await checkSeed(dslrBackoff, hotSwarmCase(seed, { paperLiteralZeroAfterSkip: true }))).problems;
    expect(found.join(' ')).toMatch(/^(exclusion|lease broken)/);
  }, 120_000);
});
