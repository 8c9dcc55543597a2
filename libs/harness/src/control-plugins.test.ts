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
