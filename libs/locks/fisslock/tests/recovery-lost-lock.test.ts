import { describe, expect, it } from 'vitest';
import type { NodeId } from '@lockfabric/ports';
import { readFissLockOptions } from '../src/options.js';
import { RecoverableFissLockClient, machineRecovery, ordersFor, recoverInProcess, repairLockState, switchImage, writeSwitchImage } from '../src/recovery/index.js';
import { fissSim, deciderControlOf as controlOf } from './support/fiss-sim.js';
import { keepOldAcquires } from './support/old-recovery-rules.js';


const MS = 1_000_000;

/**
 * The live compute-kill gap (recovery README, "The lost lock"), reduced: survivors ask for a lock whose agent lives on the
 * machine that then dies, so their ACQUIREs are forwarded there and never acknowledged. S2 grants
 * the first of them and queues the second behind it. The second's attempt (T_ACQ) runs out while
 * the first still holds: its abort waits for the ACK of an ACQUIRE that was sent on the link
 * recovery replaced, so it must not wait for that ACK forever — else the agent's transfer GRANT
 * later lands on the given-up request, which nobody releases, and the lock is never granted again.
 */
async function lostLockScenario(settleOldAcquires: boolean) {
  const sim = fissSim({ seed: 3, locks: 4, computeNodes: 3, protocolOptions: { attemptTimeoutNs: 3 * MS } });
  const options = readFissLockOptions({ policy: 'read-preferring', attemptTimeoutNs: 3 * MS });
  const [a, b, c] = sim.nodes as [NodeId, NodeId, NodeId];
  const clock = sim.cluster.clock;
  const victim = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: c, client: 0 }), options);
  const first = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: a, client: 0 }), options);
  const second = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: a, client: 1 }), options);
  const later = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: b, client: 0 }), options);

  const held = victim.acquire(0, 'exclusive');
  await sim.step();
  await held;
  sim.pool(c).failStop(); // the agent of lock 0 dies with its holder
  victim.abandon(`machine ${c} failed`);

  const outcomes: string[] = [];
  const firstGrant = first.acquire(0, 'exclusive', { timeoutMs: 40 });
  await sim.step(100_000);
  const secondGrant = second.acquire(0, 'exclusive', { timeoutMs: 40 }).then(
    async (g) => {
      outcomes.push(`second granted at ${(clock.nowNs() / MS).toFixed(1)} ms`);
      await clock.sleep(MS);
      await second.release(g);
    },
    (e: unknown) => void outcomes.push(`second failed: ${(e as Error).name}`),
  );
  await sim.step(1 * MS); // detection
  const recovery = recoverInProcess({
    epoch: 1,
    survivors: [sim.pool(a), sim.pool(b)],
    failed: [c],
    control: controlOf(sim.sw),
    policy: 'read-preferring',
    nowNs: () => clock.nowNs(),
    drain: () => clock.sleep(100_000),
    ...(settleOldAcquires ? {} : { machineSteps: keepOldAcquires }),
  });
  await sim.step(200_000);
  const outcome = await recovery;
  const g1 = await firstGrant;
  // the first holds past the second's attempt timeout, then releases
  await sim.step(5 * MS);
  await first.release(g1);
  await sim.step(40 * MS);
  await secondGrant;
  const afterward = later.acquire(0, 'exclusive', { timeoutMs: 20 }).then(
    async (g) => {
      outcomes.push('later granted');
      await later.release(g);
    },
    (e: unknown) => void outcomes.push(`later failed: ${(e as Error).name}`),
  );
  await sim.step(30 * MS);
  await afterward;
  await sim.stop();
  return { outcomes, problems: outcome.problems, wake: outcome.plan.wake };
}

describe('fisslock recovery: a survivor request queued behind the dead agent', () => {
  it('is granted after recovery even when its attempt times out while S2 queues it (the live lost-lock gap)', async () => {
    const r = await lostLockScenario(true);
    expect(r.problems).toEqual([]);
    expect(r.wake).toHaveLength(1);
    expect(r.outcomes[0]).toMatch(/^second granted/);
    expect(r.outcomes).toContain('later granted');
  });

  it('loses the lock when the ACQUIREs of the replaced link stay unsettled (the gap reproduced)', async () => {
    const r = await lostLockScenario(false);
    expect(r.outcomes).toContain('second failed: LockTimeoutError');
    expect(r.outcomes).toContain('later failed: LockTimeoutError');
  });
});

describe('fisslock recovery: clients hold still from the pause to S2 (live: report and orders are separate calls)', () => {
  /** Pause, report, then a release in the window, then S2 from that report; `direct` uses the pool's own hooks, which do not stop the client. */
  async function releaseInWindow(direct: boolean) {
    const sim = fissSim({ seed: 5, locks: 4, computeNodes: 2 });
    const options = readFissLockOptions({ policy: 'read-preferring' });
    const [a, b] = sim.nodes as [NodeId, NodeId];
    const holder = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: a, client: 0 }), options);
    const other = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: b, client: 0 }), options);
    const grant = holder.acquire(1, 'exclusive');
    await sim.step();
    const g = await grant;
    const machines = [sim.pool(a), sim.pool(b)].map((pool) => ({ pool, steps: direct ? pool : machineRecovery(pool) }));
    for (const m of machines) m.steps.pauseForRecovery();
    const reports = machines.map((m) => m.steps.recoveryReport());
    let released = false;
    const release = holder.release(g).then(() => (released = true));
    await sim.step(100_000);
    await new Promise((resolve) => setImmediate(resolve));
    const releasedBeforeS2 = released;
    const plan = repairLockState({ failed: [], reports });
    for (const m of machines) m.steps.applyRecovery(ordersFor(plan, m.pool.machine));
    await writeSwitchImage(controlOf(sim.sw), switchImage(plan, 'read-preferring'));
    await release;
    await sim.step(100_000);
    const asked = other.acquire(1, 'exclusive', { timeoutMs: 30 }).then(
      () => 'granted',
      (e: unknown) => (e as Error).name,
    );
    await sim.step(40 * MS);
    const outcome = await asked;
    await sim.stop();
    return { releasedBeforeS2, outcome };
  }

  it('a release asked for between the S1 report and S2 waits for S2, then frees the lock for others', async () => {
    const r = await releaseInWindow(false);
    expect(r.releasedBeforeS2).toBe(false);
    expect(r.outcome).toBe('granted');
  });

  it('without the hold the release is undone by S2: a holder nobody releases, the lock is lost', async () => {
    const r = await releaseInWindow(true);
    expect(r.releasedBeforeS2).toBe(true);
    expect(r.outcome).toBe('LockTimeoutError');
  });
});
