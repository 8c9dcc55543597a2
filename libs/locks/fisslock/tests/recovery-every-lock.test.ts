import { describe, expect, it } from 'vitest';
import type { LockMode, NodeId } from '@lockfabric/ports';
import { readFissLockOptions } from '../src/options.js';
import { RecoverableFissLockClient, recoverInProcess } from '../src/recovery/index.js';
import { fissSim, deciderControlOf as controlOf } from './support/fiss-sim.js';
import { keepOldAcquires } from './support/old-recovery-rules.js';
import { lcg32 } from '@lockfabric/random';


const MS = 1_000_000;
const LOCKS = 4;

/**
 * The live compute-kill case in the simulator: clients on three machines take 4 locks with short
 * attempts (T_ACQ 1 ms, so attempts time out around the recovery, as the 2 s T_ACQ does live),
 * machine 3 stops holding some of them, the survivors queue behind it, and S1–S3 run 1 ms later.
 * Returns the locks never granted to a survivor after the recovery.
 */
async function lostLocks(seed: number, mutant: boolean): Promise<{ lost: number[]; problems: readonly string[] }> {
  const sim = fissSim({ seed, locks: LOCKS, computeNodes: 3, protocolOptions: { attemptTimeoutNs: 1 * MS } });
  const options = readFissLockOptions({ policy: 'read-preferring', attemptTimeoutNs: 1 * MS });
  const clock = sim.cluster.clock;
  const victim = sim.nodes[2] as NodeId;
  const next = lcg32(seed, 'ansiC');
  const failAtNs = 2 * MS;
  let recoveredAtNs = Infinity;
  const dead = new Set<NodeId>();
  const grantedAfter = new Set<number>();
  const clients = new Map<NodeId, RecoverableFissLockClient[]>();
  const workers = sim.nodes.flatMap((node) =>
    Array.from({ length: 2 }, (_, k) => {
      const client = new RecoverableFissLockClient(sim.cluster.clientPorts({ node, client: k }), options);
      clients.set(node, [...(clients.get(node) ?? []), client]);
      return async () => {
        while (clock.nowNs() < 40 * MS && !dead.has(node)) {
          const lock = Math.floor(next() * LOCKS);
          const mode: LockMode = next() < 0.2 ? 'shared' : 'exclusive';
          let grant;
          try {
            grant = await client.acquire(lock, mode, { timeoutMs: 8 });
          } catch {
            continue;
          }
          if (dead.has(node)) return;
          if (clock.nowNs() > recoveredAtNs) grantedAfter.add(lock);
          await clock.sleep(node === victim ? 3 * MS : 100_000 + Math.floor(next() * 300_000));
          if (dead.has(node)) return;
          await client.release(grant);
          await clock.sleep(20_000);
        }
      };
    }),
  );
  let problems: readonly string[] = [];
  void (async () => {
    await clock.sleep(failAtNs);
    dead.add(victim);
    sim.pool(victim).failStop();
    for (const c of clients.get(victim) ?? []) c.abandon('failed');
    await clock.sleep(1 * MS);
    const outcome = await recoverInProcess({
      epoch: 1,
      survivors: sim.nodes.filter((n) => n !== victim).map((n) => sim.pool(n)),
      failed: [victim],
      control: controlOf(sim.sw),
      policy: 'read-preferring',
      nowNs: () => clock.nowNs(),
      drain: () => clock.sleep(100_000),
      ...(mutant ? { machineSteps: keepOldAcquires } : {}),
    });
    problems = outcome.problems;
    recoveredAtNs = clock.nowNs();
  })();
  const done = Promise.all(workers.map((w) => w()));
  await sim.scheduler.run({ untilNs: 60 * MS, maxEvents: 2_000_000 });
  await done;
  await sim.stop();
  return { lost: Array.from({ length: LOCKS }, (_, l) => l).filter((l) => !grantedAfter.has(l)), problems };
}

describe('fisslock recovery after a compute-node failure: every lock is granted to a survivor again', () => {
  it('over 12 seeds, no lock is lost', async () => {
    const lost: string[] = [];
    for (let seed = 1; seed <= 12; seed++) {
      const r = await lostLocks(seed, false);
      expect(r.problems).toEqual([]);
      if (r.lost.length > 0) lost.push(`seed ${seed}: locks ${r.lost.join(',')}`);
    }
    expect(lost).toEqual([]);
  });

  it('with the old pause (ACQUIREs of the replaced link unsettled) some seed loses a lock', async () => {
    const lost: string[] = [];
    for (let seed = 1; seed <= 12; seed++) {
      const r = await lostLocks(seed, true);
      if (r.lost.length > 0) lost.push(`seed ${seed}: locks ${r.lost.join(',')}`);
    }
    console.log(`mutant (old pause): ${lost.length} of 12 seeds lose a lock — ${lost.join('; ')}`);
    expect(lost.length).toBeGreaterThan(0);
  });
});
