import { protocolById } from '@lockfabric/lock-catalog';
import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { runInMemory } from '../../src/in-memory-run.js';
import { runSwarmMix, runSwarmSeed, swarmRunOptions } from '../../src/swarm/run.js';
import { swarmMix } from '../../src/swarm/case.js';

const fisslock = protocolById('fisslock');

/** Exclusive-heavy and hot: every lock is wanted from both racks at once. */
const SPEC = { clients: 8, locks: 6, readRatio: 0.3, distribution: 'uniform' as const, operations: 400, thinkNs: 500, criticalSectionNs: 1_500, seed: 7, timeoutMs: 20 };

// FissLock §5.4: the lock ids partitioned over two switches, one per rack; compute node i sits in
// rack i % 2, so each machine sends half its locks to the other rack's switch.
describe('multi-rack FissLock on sim (§5.4)', () => {
  it('locks spread over two switches: both decide grants and the checker passes', async () => {
    const r = await runInMemory({ substrate: 'sim', protocol: fisslock, spec: SPEC, computeNodes: 2, racks: 2, switchLinks: 'fifo' });
    expect(r.verdict.violations).toStrictEqual([]);
    expect(r.verdict.ok).toBe(true);
    expect(r.cutOff).toBe(false);
    expect(r.switchPackets).toHaveLength(2);
    const [rack0, rack1] = r.switchPackets ?? [];
    expect(rack0).toBeGreaterThan(0);
    expect(rack1).toBeGreaterThan(0);
    expect(r.summary.acquires).toBeGreaterThan(300);
    // one sequence window per switch: no switch ever sees a gap in a machine's numbering
    expect(r.switchDecisions?.['seq-gap'] ?? 0).toBe(0);
  });

  it('embedded (real time, one process): the same routing, both switches used, the checker passes', async () => {
    // timers for real time, as bench gives embedded runs (the live defaults): the sim's 200 µs RTO would resend in a storm
    const realTime = { rtoNs: '250000000', attemptTimeoutNs: '2000000000', starvePeriodNs: '20000000' };
    const r = await runInMemory({ substrate: 'embedded', protocol: fisslock, protocolOptions: realTime, spec: { ...SPEC, operations: 200, timeoutMs: 10_000 }, computeNodes: 2, racks: 2 });
    expect(r.verdict.ok).toBe(true);
    expect(r.summary.acquires).toBe(200);
    for (const n of r.switchPackets ?? []) expect(n).toBeGreaterThan(0);
    expect(r.switchPackets).toHaveLength(2);
  });

  it('with one rack every packet goes to the one switch', async () => {
    const r = await runInMemory({ substrate: 'sim', protocol: fisslock, spec: SPEC, computeNodes: 2, switchLinks: 'fifo' });
    expect(r.switchPackets).toHaveLength(1);
    expect(r.verdict.ok).toBe(true);
  });

  it('mutant: machines of rack 1 route each lock to the wrong rack’s switch — two deciders grant one lock, the checker sees it', async () => {
    const r = await runInMemory({ substrate: 'sim', protocol: fisslock, spec: { ...SPEC, readRatio: 0 }, computeNodes: 2, racks: 2, switchLinks: 'fifo', mutantShiftedRackRouting: true });
    expect(r.verdict.violations.length).toBeGreaterThan(0);
  });

  it('mutant: one sequence window over both switches — each switch sees gaps in a machine’s numbering, drops them, and acquires stall', async () => {
    const r = await runInMemory({ substrate: 'sim', protocol: fisslock, spec: { ...SPEC, operations: 100, timeoutMs: 2 }, computeNodes: 2, racks: 2, switchLinks: 'fifo', mutantOneSeqWindow: true });
    const timeouts = r.verdict.liveness.counts.acquireErrors['LockTimeoutError'] ?? 0;
    expect(r.cutOff || !r.verdict.ok || timeouts > 0).toBe(true);
    expect(r.switchDecisions?.['seq-gap'] ?? 0).toBeGreaterThan(0);
  });

  it('racks on a protocol that does not partition lock ids is a configuration error', async () => {
    const caslock = protocolById('caslock');
    await expect(runInMemory({ substrate: 'sim', protocol: caslock, spec: SPEC, racks: 2 })).rejects.toBeInstanceOf(ConfigError);
  });

  it('a compute node killed mid-run: S1–S3 rewrites both racks’ deciders and every lock is acquirable after healing', async () => {
    const r = await runSwarmMix(fisslock, killMix());
    expect(r.verdict.violations).toStrictEqual([]);
    expect(r.control?.counts['fissRecoveries']).toBeGreaterThanOrEqual(1);
    expect(r.heal?.stuck).toStrictEqual([]);
    expect(r.switchPackets?.every((n) => n > 0)).toBe(true);
  });

  it('mutant: S3 writes rack 0’s switch only — the heal probe finds locks of rack 1 stuck', async () => {
    const mix = killMix();
    const r = await runInMemory({ ...swarmRunOptions(fisslock, mix), mutantRecoverFirstRackOnly: true });
    expect(r.control?.counts['fissRecoveries']).toBeGreaterThanOrEqual(1);
    const stuck = r.heal?.stuck ?? [];
    expect(stuck.length + r.verdict.violations.length).toBeGreaterThan(0);
    // among them, locks owned by the rack S3 skipped (odd ids: rackOfLock = id % 2)
    expect(stuck.some((lock) => lock % 2 === 1), `stuck: ${stuck.join(', ')}`).toBe(true);
  });

  it('swarm seeds over two racks (crashes, kills with S1–S3 on both switches, pauses, switch faults) pass', async () => {
    let kills = 0;
    for (const seed of SWARM_SEEDS) {
      const mix = swarmMix(fisslock, seed, { racks: '2' });
      if (mix.nodeFailure) kills++;
      const r = await runSwarmSeed(fisslock, seed, { racks: '2' });
      expect(r.failure, `seed ${seed} (${r.description}): ${r.failure?.detail}\n${r.failure?.reproduce}`).toBeUndefined();
    }
    expect(kills).toBeGreaterThan(0);
  }, 120_000);
});

/** Swarm seed 171 over two racks: a compute node is killed mid-run (its agents' locks need S1–S3). */
function killMix() {
  const mix = swarmMix(fisslock, 171, { racks: '2' });
  expect(mix.nodeFailure).toBeDefined();
  return mix;
}

/** Seeds whose mixes include compute-node kills (171, 146), pauses (50, 236) and clean runs. */
const SWARM_SEEDS = [171, 146, 50, 236, 1, 2, 3, 4];
