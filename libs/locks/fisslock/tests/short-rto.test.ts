import { describe, expect, it } from 'vitest';
import type { AgentPool } from '../src/agent-pool.js';
import { runSeed } from './support/sweep.js';
import { expectEnd } from './support/wide-sweep.js';

/** runSeed with a given RTO and no faults, plus the agent-pool counters summed over machines. */
async function run(seed: number, rtoNs: number) {
  let pools: AgentPool[] = [];
  const r = await runSeed(seed, { ops: 8, protocolOptions: { rtoNs }, onSim: (sim) => (pools = sim.nodes.map((n) => sim.pool(n))) });
  const counters: Record<string, number> = {};
  for (const p of pools) for (const [k, v] of Object.entries(p.counters)) counters[k] = (counters[k] ?? 0) + v;
  return { r, counters };
}

// An RTO short against the path (the sim's hop is ~3 µs; live uses 30 ms over NATS): a requester
// resends its ACQUIRE before the GRANT that acknowledges it comes back, so DUP copies of one
// request race the decider's ② copy, and bounced copies are decided again. Without faults every
// acquire must be granted (spec §11 property 9); these runs used to time out acquires behind an
// agent with no holder and a refused grantee at its head.
describe('fisslock with a short RTO, no faults', () => {
  for (const rtoNs of [3_000, 6_000]) {
    it(`RTO ${rtoNs / 1000} µs, seeds 1–40: every acquire granted, exclusion, one agent per lock, Lemma 1, every lock free at the end`, async () => {
      for (let seed = 1; seed <= 40; seed++) {
        const { r } = await run(seed, rtoNs);
        const at = `seed ${seed} (rtoNs ${rtoNs})`;
        expect(r.violations, at).toEqual([]);
        expect(r.failed + r.untyped, `${at}: acquires not granted`).toBe(0);
        expect(r.stalled, at).toBeUndefined();
        expect(r.agentsPerLockMax, at).toBeLessThanOrEqual(1);
        expect(r.modeMismatch, at).toBe(0);
        expectEnd(at, r.endState, true);
      }
    }, 120_000);
  }

  it('seed 3 (RTO 3 µs): a DUP copy queued the ② requester as a waiter and the ② copy was deduplicated away; inca stayed behind, the transfer was refused, the holder’s RELEASE only removed a waiter', async () => {
    const { r, counters } = await run(3, 3_000);
    expect(r.failed + r.untyped).toBe(0);
    expect(counters.queuedThenGranted).toBeGreaterThan(0);
  }, 60_000);

  it('seed 34 (RTO 6 µs): the ② holder’s RELEASE removed the waiter its DUP copy had queued, then the ② copy added a holder nobody releases', async () => {
    const { r, counters } = await run(34, 6_000);
    expect(r.failed + r.untyped).toBe(0);
    expect(counters.queuedThenGranted).toBeGreaterThan(0);
  }, 60_000);

  it('seed 32 (RTO 6 µs): a bounced copy was decided again as ② while the request was already a shared follower; the agent did not count it and every later FREE/transfer was refused', async () => {
    const { r, counters } = await run(32, 6_000);
    expect(r.failed + r.untyped).toBe(0);
    expect(counters.grantedTwice).toBeGreaterThan(0);
  }, 60_000);
});
