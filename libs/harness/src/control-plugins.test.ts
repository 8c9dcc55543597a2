import { protocolById } from '@lockfabric/lock-catalog';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';
import { runSwarmSeed } from './swarm/run.js';
import { swarmMix } from './swarm/case.js';

const fisslock = protocolById('fisslock');

// FissLock recovery runs in sim as on live: the compute nodes' responders over their agent pools
// and gated switch links, the coordinator's recovery hook writing S3 into the switch model, the
// switch's admission fence and heartbeat. Before, a node kill left the dead machine's agents and
// every lock they held unrecoverable, so FissLock's swarm profile had no kills.
describe('FissLock recovery in sim', () => {
  it('a compute node killed mid-run: the coordinator runs S1–S3 and every lock is acquirable after healing', async () => {
    const mix = swarmMix(fisslock, 171);
    expect(mix.nodeFailure).toBeDefined();
    const r = await runInMemory({ substrate: 'sim', protocol: fisslock, spec: mix.spec, computeNodes: 3, switchLinks: 'fifo', heal: mix.heal, ...(mix.nodeFailure ? { nodeFailure: mix.nodeFailure } : {}) });
    expect(r.verdict.violations).toStrictEqual([]);
    expect(r.control?.counts['fissRecoveries']).toBeGreaterThanOrEqual(1);
    expect(r.heal?.stuck).toStrictEqual([]);
  });

  it('swarm seeds with a kill and a coordinator crash mid-recovery (171, 146), or process pauses (50, 236), pass', async () => {
    for (const seed of [171, 146, 50, 236]) {
      const r = await runSwarmSeed(fisslock, seed);
      expect(r.description).toMatch(/kill=compute/);
      expect(r.failure, `seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
    }
  });
});

// The sim control plane runs the coordinator's stuck-lock triage (lock-fisslock stuck-triage.ts)
// over the in-memory bus, as live: holds longer than T_STUCK with writers queued behind them are
// stalled-queue suspicions, which the nodes' lock-report answers show to be long holds.
describe('FissLock stalled-queue suspicions in sim', () => {
  const longHolds = (mutantStuckRepair?: 'unconfirmed') =>
    runInMemory({
      substrate: 'sim',
      protocol: fisslock,
      protocolOptions: { tStuckNs: 1 }, // raised to its floor, 10 RTO
      spec: { clients: 6, locks: 1, readRatio: 0, distribution: 'uniform', operations: 24, thinkNs: 0, criticalSectionNs: 2_000_000, seed: 7, timeoutMs: 200 },
      computeNodes: 3,
      switchLinks: 'fifo',
      // a trace of loss gives the run its control plane (a FissLock run that loses packets needs one)
      switchFaults: { rules: [{ loss: 0.0001 }] },
      ...(mutantStuckRepair ? { mutantStuckRepair } : {}),
    });

  it('long holds: every suspicion is dismissed by the nodes\' answers, nobody is paused', async () => {
    const r = await longHolds();
    expect(r.verdict.violations).toStrictEqual([]);
    expect(r.control?.counts['fissSuspicions']).toBeGreaterThan(0);
    expect(r.control?.counts['fissSuspicionsDismissed']).toBe(r.control?.counts['fissSuspicions']);
    expect(r.control?.counts['fissRecoveries']).toBe(0);
  });

  it('mutantStuckRepair unconfirmed: the same long holds get S1–S3 (every node paused)', async () => {
    const r = await longHolds('unconfirmed');
    expect(r.control?.counts['fissSuspicionsDismissed']).toBe(0);
    expect(r.control?.counts['fissRecoveries']).toBeGreaterThan(0);
  });
});

