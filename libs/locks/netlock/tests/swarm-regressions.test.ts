import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '@lockfabric/harness';
import { netlock } from '../src/index.js';

// Found as swarm seed 478 (a coordinator crash, delayed ingress packets, jitter): a reader's
// CONTINUE notify was overtaken by its own RELEASE; by the time it reached the switch a writer held
// its slot, and the switch granted the reader behind that writer. The notify now carries its
// entry's serial. The packet schedule moves whenever NetLock's traffic changes (the sim's
// coordinator purge; then the switch's ACK of every RELEASE, which put 478 back): seeds 478
// (delayed ingress) and 651 (both links) reach the overlap with the serial check off in the
// current schedule, the first two a scan from seed 1 found (then 1728; netlock-stale-notify.test.ts builds
// the case by hand).
describe('netlock: a stale CONTINUE notify', () => {
  it('seeds 478 and 651 are safe and live after healing', async () => {
    for (const seed of [478, 651]) {
      const r = await runSwarmSeed(netlock, seed);
      expect(r.description).toMatch(/switch=(both|ingress)\(/);
      expect(r.failure, `seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
    }
  });

  it('mutant: without the serial check the same seeds overlap two holders', async () => {
    for (const seed of [478, 651]) {
      const r = await runSwarmSeed(netlock, seed, { mutantUncheckedNotify: true });
      expect(r.failure?.kind, `seed ${seed}`).toBe('safety');
      expect(r.failure?.detail).toMatch(/overlaps/);
    }
  });
});

// A compute node killed under NetLock: the sim's coordinator purges the dead machine's switch-queue
// entries through the switch model (as SwitchControl.PurgeNetLockMachine does live), so the
// waiters behind them are granted.
describe('netlock: the coordinator purges a dead machine in sim', () => {
  it('seeds 12 and 22 (a compute node killed) are live after healing', async () => {
    for (const seed of [12, 22]) {
      const r = await runSwarmSeed(netlock, seed);
      expect(r.description).toMatch(/kill=compute/);
      expect(r.failure, `seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
    }
  });

  it('mutant: a purge that grants nobody leaves locks unacquirable after healing', async () => {
    for (const seed of [12, 22]) {
      const r = await runSwarmSeed(netlock, seed, { mutantPurgeWithoutGrant: true });
      expect(r.failure?.kind).toBe('liveness');
      expect(r.failure?.detail).toMatch(/after healing, locks .* not acquirable/);
    }
  });
});
