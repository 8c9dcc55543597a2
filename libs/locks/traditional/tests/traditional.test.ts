import { describe, expect, it } from 'vitest';
import { LocalOp } from '@lockfabric/lock-srvlock';
import { countedRun, soloSpec, swarmSweep } from '@lockfabric/harness';
import { traditional } from '../src/index.js';

describe('traditional: message counts (DSLR §6.1)', () => {
  it('uncontended: two SEND/RECV exchanges per lock and unlock (request + grant, request + ack)', async () => {
    const { traffic, result } = await countedRun(traditional, soloSpec(50));
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(50);
    expect(traffic.clientSends).toBe(100);
    expect(traffic.serviceSends).toBe(100);
    expect(traffic.serviceReplies.get(LocalOp.grant)).toBe(50);
    expect(traffic.serviceReplies.get(LocalOp.ack)).toBe(50);
    // No one-sided verb at all: the manager's CPU does the work.
    expect(Object.values(result.verbs).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('contended: waiters queue at the manager and are notified once (no retries)', async () => {
    const spec = { clients: 12, locks: 1, readRatio: 0.3, distribution: 'uniform' as const, operations: 300, thinkNs: 500, criticalSectionNs: 3_000, seed: 5 };
    const { traffic, result } = await countedRun(traditional, spec, { retransmitNs: 1_000_000_000 });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(300);
    expect(traffic.clientSends).toBe(600);
    expect(traffic.serviceReplies.get(LocalOp.grant)).toBe(300);
  });

  it('the server CPU bounds throughput: one thread at cpuNs serves at most 1/cpuNs requests per second', async () => {
    const spec = { clients: 16, locks: 1000, readRatio: 0, distribution: 'uniform' as const, operations: 800, thinkNs: 0, criticalSectionNs: 0, seed: 2 };
    const one = await countedRun(traditional, spec, { cpuNs: 2_000 });
    const four = await countedRun(traditional, spec, { cpuNs: 2_000, threads: 4 });
    // Two requests per operation, 2 µs each on one thread: at most 250 k ops/s of virtual time.
    expect(one.result.summary.throughput).toBeLessThanOrEqual(250_000);
    expect(one.result.summary.throughput).toBeGreaterThan(200_000);
    expect(four.result.summary.throughput).toBeGreaterThan(2 * one.result.summary.throughput);
  });
});

describe('traditional: check --swarm', () => {
  // A short sweep here; e2e cli-check-swarm runs 300 seeds of each.
  it('20 seeds with compute-node kills, pauses and coordinator crashes: exclusion and healing hold', async () => {
    const { failures, kills, pauses } = await swarmSweep(traditional, 20);
    expect(failures.map((f) => `${f.failure?.kind}: ${f.failure?.reproduce}`)).toEqual([]);
    expect(kills).toBeGreaterThan(4);
    expect(pauses).toBeGreaterThan(4);
  }, 120_000);

  it('mutant: a release that clears every holder is caught as a safety failure', async () => {
    const { failures } = await swarmSweep(traditional, 30, { mutantReleaseAllHolders: true });
    expect(failures.some((f) => f.failure?.kind === 'safety')).toBe(true);
  }, 60_000);
});
