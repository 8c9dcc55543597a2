import { describe, expect, it } from 'vitest';
import type { NodeId } from '@lockfabric/ports';
import { readFissLockOptions } from '../src/options.js';
import { RecoverableFissLockClient, machineRecovery, ordersFor, repairLockState, switchImage, writeSwitchImage } from '../src/recovery/index.js';
import { RID_MASK } from '../src/wire.js';
import { fissSim, deciderControlOf as controlOf } from './support/fiss-sim.js';


const MS = 1_000_000;

/**
 * A request made before S2 whose GRANT comes after it. Machine a's waiter
 * sent its ACQUIRE as seq 1 of a's old link; S2 keeps it queued at the agent on b and gives a a
 * new link, which numbers from 1 again. a's next ACQUIRE (another client, lock 1) is seq 1 of the
 * new link, and its first copy is lost. When b's holder releases, the waiter's GRANT arrives; it
 * must acknowledge seq 1 of the link its ACQUIRE went out on — not the new link's seq 1, which
 * would take the lost ACQUIRE out of the retransmission buffer (it is never resent, and its
 * client's attempt runs into T_ACQ).
 */
async function grantAfterS2() {
  const sim = fissSim({ seed: 7, locks: 4, computeNodes: 2 });
  const options = readFissLockOptions({ policy: 'read-preferring' });
  const [a, b] = sim.nodes as [NodeId, NodeId];
  const holder = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: b, client: 0 }), options);
  const waiter = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: a, client: 0 }), options);
  const fresh = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: a, client: 1 }), options);

  const held = holder.acquire(0, 'exclusive');
  await sim.step();
  const g = await held;
  let waiterGranted = false;
  const waited = waiter.acquire(0, 'exclusive', { timeoutMs: 100 }).then(async (w) => {
    waiterGranted = true;
    await waiter.release(w);
  });
  await sim.step(100_000); // queued at b's agent, acknowledged: seq 1 of a's old link

  const machines = [sim.pool(a), sim.pool(b)].map((pool) => ({ pool, steps: machineRecovery(pool) }));
  for (const m of machines) m.steps.pauseForRecovery();
  const reports = machines.map((m) => m.steps.recoveryReport());
  const plan = repairLockState({ failed: [], reports });
  for (const m of machines) m.steps.applyRecovery(ordersFor(plan, m.pool.machine));
  await writeSwitchImage(controlOf(sim.sw), switchImage(plan, 'read-preferring'));

  const lost = sim.fault({ direction: 'out', machine: a, match: (p) => p.type === 'acquire' && p.lock === 1, action: 'drop' });
  const linkA = sim.pool(a).link;
  let freshAttempt: number | string = 'not granted';
  const freshGrant = fresh.acquire(1, 'exclusive', { timeoutMs: 100 }).then(
    async (f) => {
      freshAttempt = f.task & RID_MASK;
      await fresh.release(f);
    },
    (e: unknown) => void (freshAttempt = (e as Error).name),
  );
  const freshSeq = linkA.outstandingPackets().find((p) => p.type === 'acquire' && p.lock === 1)?.seq;
  await holder.release(g); // b's agent hands lock 0 to the waiter: its GRANT reaches a within the RTO
  // well within T_ACQ (10 ms): a resent ACQUIRE is granted by then, one nobody resends is not
  await sim.step(3 * MS);
  const attemptWithinRto = freshAttempt;
  await sim.step(200 * MS);
  await Promise.all([waited, freshGrant]);
  await sim.stop();
  return { queued: plan.agents.find((x) => x.lid === 0)?.wqueue.map((w) => w.mid), lostSeq: lost.fired?.seq, freshSeq, waiterGranted, attemptWithinRto, resent: linkA.retransmissions };
}

describe('fisslock recovery: sequence numbers from before S2 are void after it', () => {
  it("a pre-S2 request's GRANT does not acknowledge the new link's packet with the same seq", async () => {
    const r = await grantAfterS2();
    // the set-up: the waiter stayed queued through S2, and the new link reused seq 1 for the lost ACQUIRE
    expect(r.queued).toStrictEqual([1]);
    expect(r.freshSeq).toBe(1);
    expect(r.lostSeq).toBe(1);
    expect(r.waiterGranted).toBe(true);
    // the lost ACQUIRE was resent on its RTO and granted on the first attempt, not after T_ACQ
    expect(r.resent).toBeGreaterThanOrEqual(1);
    expect(r.attemptWithinRto).toBe(1);
  });
});
