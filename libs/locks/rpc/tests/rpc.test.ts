import { describe, expect, it } from 'vitest';
import { LocalOp } from '@lockfabric/lock-srvlock';
import { countedRun, soloSpec, swarmSweep } from '@lockfabric/harness';
import { rpc } from '../src/index.js';

const tries = (replies: Map<number, number>) => (replies.get(LocalOp.grant) ?? 0) + (replies.get(LocalOp.busy) ?? 0);

describe('rpc: message counts (ShiftLock §4 baseline)', () => {
  it('uncontended: one request/reply per try, one try per acquire, one exchange per release', async () => {
    const { traffic, result } = await countedRun(rpc, soloSpec(50));
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(50);
    expect(traffic.clientSends).toBe(100);
    expect(traffic.serviceReplies.get(LocalOp.grant)).toBe(50);
    expect(traffic.serviceReplies.get(LocalOp.busy) ?? 0).toBe(0);
    expect(traffic.serviceReplies.get(LocalOp.ack)).toBe(50);
  });

  it('contended: a conflicting try is answered busy and re-sent; every try is one request and one reply', async () => {
    const spec = { clients: 12, locks: 1, readRatio: 0.3, distribution: 'uniform' as const, operations: 300, thinkNs: 500, criticalSectionNs: 3_000, seed: 5 };
    const { traffic, result } = await countedRun(rpc, spec, { retransmitNs: 1_000_000_000 });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(300);
    const busy = traffic.serviceReplies.get(LocalOp.busy) ?? 0;
    expect(busy).toBeGreaterThan(300);
    // Client requests = tries + releases; server replies = one per try + one ack per release.
    expect(traffic.clientSends).toBe(tries(traffic.serviceReplies) + 300);
    expect(traffic.serviceSends).toBe(tries(traffic.serviceReplies) + 300);
    expect(traffic.serviceReplies.get(LocalOp.grant)).toBe(300);
  });
});

describe('rpc: check --swarm', () => {
  // A short sweep here; e2e cli-check-swarm runs 300 seeds of each.
  it('20 seeds with compute-node kills, pauses and coordinator crashes: exclusion and healing hold', async () => {
    const { failures, kills, pauses } = await swarmSweep(rpc, 20);
    expect(failures.map((f) => `${f.failure?.kind}: ${f.failure?.reproduce}`)).toEqual([]);
    expect(kills).toBeGreaterThan(4);
    expect(pauses).toBeGreaterThan(4);
  }, 120_000);

  it('mutant: a release that clears every holder is caught as a safety failure', async () => {
    const { failures } = await swarmSweep(rpc, 30, { mutantReleaseAllHolders: true });
    expect(failures.some((f) => f.failure?.kind === 'safety')).toBe(true);
  }, 60_000);
});
