import { describe, expect, it } from 'vitest';
import type { ShiftLockClient, ShiftLockGrant, ShiftLockWriterGrant } from '../src/index.js';
import { scripted } from './support/scripted.js';
import type { Pending } from './support/scripted.js';

const LOCK = 0;
const STEP_NS = 20_000;

function writer(grant: ShiftLockGrant | undefined): ShiftLockWriterGrant {
  if (grant?.role !== 'writer') throw new Error('expected a writer grant');
  return grant;
}

/**
 * Spec §5.3 / A1: N = 2 and a queue of four writers, all enqueued while Epoch = 0, with a reader
 * arriving during every writer's hold. The lock crosses two writer phases; the last writer finds the
 * queue empty and must flip Epoch to admit the readers that came during its phase.
 */
async function crossing(paperLiteralEpoch: boolean) {
  const s = scripted({ consecutiveWriters: 2, paperLiteralEpoch, recovery: 'off' });
  const writers = [0, 1, 2, 3].map((i) => s.client(i));
  const readers = [10, 11, 12, 13].map((i) => s.client(i));
  const w: Pending[] = [];
  const r: Pending[] = [];
  const epochsSeen: { writer: number; guard: number; entry: number }[] = [];

  w.push(s.acquire(writers[0]!, LOCK, 'exclusive'));
  await s.until(w[0]!.settled);
  for (let i = 1; i < 4; i++) {
    w.push(s.acquire(writers[i]!, LOCK, 'exclusive'));
    await s.advance(STEP_NS); // enqueued in order, Successor delivered
  }
  const hold = async (i: number) => {
    expect(await s.until(w[i]!.settled), `W${i + 1} holds`).toBe(true);
    epochsSeen.push({ writer: i + 1, guard: writer(w[i]!.grant).guard.epoch, entry: s.entry(LOCK).epoch });
    r.push(s.acquire(readers[i]!, LOCK, 'shared')); // a reader arrives during every writer hold
    await s.advance(STEP_NS);
    expect(r[i]!.settled(), `R${i + 1} waits for the writer phase to end`).toBe(false);
    await s.run(writers[i]!.release(w[i]!.grant!));
  };
  const releaseReaders = async (...indexes: number[]) => {
    for (const i of indexes) {
      expect(await s.until(r[i]!.settled), `R${i + 1} admitted`).toBe(true);
      await s.run(readers[i]!.release(r[i]!.grant!));
    }
  };

  await hold(0); // W1 → Handover{consWrt 1, epoch 0} → W2
  await hold(1); // W2 reaches N: ExtFAA flips Epoch 0 → 1, admits R1 R2, ModeChanged{x, epoch 1} → W3
  const afterFirstFlip = s.entry(LOCK);
  await releaseReaders(0, 1); // W3 enters once RelCnt = x
  await hold(2); // W3 → Handover{consWrt 1, epoch 1} → W4
  await hold(3); // W4: no successor: ExtCAS sets TailPtr null and Epoch := 1 − guard.epoch
  const afterLast = s.entry(LOCK);
  const lateReadersAdmitted = await s.until(() => r[2]!.settled() && r[3]!.settled(), 200_000);
  return { s, w, r, readers, epochsSeen, afterFirstFlip, afterLast, lateReadersAdmitted };
}

describe('worked example: the epoch crossing a long writer queue (spec §5.3, A1)', () => {
  it('with the epoch carried in Handover/ModeChanged, every writer knows the real Epoch and the last one flips it', async () => {
    const { s, r, readers, epochsSeen, afterFirstFlip, afterLast, lateReadersAdmitted } = await crossing(false);
    expect(afterFirstFlip).toMatchObject({ epoch: 1, readers: 2 });
    // I5: the holder's epoch equals the entry's throughout.
    expect(epochsSeen).toEqual([
      { writer: 1, guard: 0, entry: 0 },
      { writer: 2, guard: 0, entry: 0 },
      { writer: 3, guard: 1, entry: 1 },
      { writer: 4, guard: 1, entry: 1 },
    ]);
    expect(afterLast).toMatchObject({ epoch: 0, readers: 2, tail: 0n });
    expect(lateReadersAdmitted).toBe(true);
    // RelCnt: W1 handover, W2 transfer, R1, R2, W3 handover, W4 release.
    expect(afterLast.relCnt).toBe(6n);
    for (const i of [2, 3]) await s.run(readers[i]!.release(r[i]!.grant!));
    expect(s.entry(LOCK)).toEqual({ epoch: 0, readers: 0, tail: 0n, relCnt: 8n });
    // A writer that comes now takes the free lock at once.
    const next = s.acquire(s.client(20), LOCK, 'exclusive');
    expect(await s.until(next.settled)).toBe(true);
  });

  it("paper-literal (Algorithm 2's snapshot epoch): W4 holds with a stale Epoch, its release does not flip, readers and the next writer are stuck", async () => {
    const { s, epochsSeen, afterLast, lateReadersAdmitted } = await crossing(true);
    expect(epochsSeen.map((e) => e.guard === e.entry)).toEqual([true, true, true, false]);
    expect(epochsSeen[3]).toEqual({ writer: 4, guard: 0, entry: 1 });
    // The "flip" wrote back the same Epoch: R3 and R4 stay counted in RdrCnt and never get in.
    expect(afterLast).toMatchObject({ epoch: 1, readers: 2, tail: 0n });
    expect(lateReadersAdmitted).toBe(false);
    // The next writer queues behind those two readers and waits on RelCnt for ever (without recovery).
    const next = s.acquire(s.client(20), LOCK, 'exclusive');
    expect(await s.until(next.settled, 2_000_000)).toBe(false);
  });

  it('paper-literal with failure detection on: only a spurious recovery ends the deadlock (I13 violated)', async () => {
    const s = scripted({ consecutiveWriters: 2, paperLiteralEpoch: true, leaseNs: 200_000 }, { recoveryServer: true });
    const writers = [0, 1, 2, 3].map((i) => s.client(i));
    const w = [s.acquire(writers[0]!, LOCK, 'exclusive')];
    await s.until(w[0]!.settled);
    for (let i = 1; i < 4; i++) {
      w.push(s.acquire(writers[i]!, LOCK, 'exclusive'));
      await s.advance(STEP_NS);
    }
    const readerClients = [10, 11, 12, 13].map((i) => s.client(i));
    const readers: Pending[] = [];
    for (let i = 0; i < 4; i++) {
      await s.until(w[i]!.settled);
      readers.push(s.acquire(readerClients[i]!, LOCK, 'shared'));
      await s.advance(STEP_NS);
      await s.run(writers[i]!.release(w[i]!.grant!));
      if (i === 1) {
        for (const j of [0, 1]) {
          await s.until(readers[j]!.settled);
          await s.run(readerClients[j]!.release(readers[j]!.grant!));
        }
      }
    }
    // Nobody failed, yet the stuck readers' RelCnt watch fires after 3·T_lease and the server resets the lock.
    expect(await s.until(() => readers[2]!.settled() && readers[3]!.settled(), 5_000_000)).toBe(true);
    expect(s.server!.stats.accepted).toBe(1);
    expect(s.entry(LOCK).relCnt >= 1n << 63n).toBe(true);
    await s.stop();
  });
});

describe('a chain of writers much longer than N while readers keep arriving (I5, I9, I11)', () => {
  it('N = 3, ten queued writers: at most N writers per phase, each reader admitted at the first flip after it arrived', async () => {
    const N = 3;
    const s = scripted({ consecutiveWriters: N, recovery: 'off' });
    const writers = Array.from({ length: 10 }, (_, i) => s.client(i));
    const w = [s.acquire(writers[0]!, LOCK, 'exclusive')];
    await s.until(w[0]!.settled);
    for (let i = 1; i < writers.length; i++) {
      w.push(s.acquire(writers[i]!, LOCK, 'exclusive'));
      await s.advance(STEP_NS);
    }
    let phaseWriters = 0;
    let lastEpoch = s.entry(LOCK).epoch;
    const waiting: { pending: Pending; client: ShiftLockClient; arrivedEpoch: number }[] = [];
    for (let i = 0; i < writers.length; i++) {
      expect(await s.until(w[i]!.settled), `W${i + 1}`).toBe(true);
      const entry = s.entry(LOCK);
      expect(writer(w[i]!.grant).guard.epoch, `I5 at W${i + 1}`).toBe(entry.epoch);
      if (entry.epoch !== lastEpoch) phaseWriters = 0;
      lastEpoch = entry.epoch;
      phaseWriters++;
      expect(phaseWriters, 'I11: consecutive writers per phase').toBeLessThanOrEqual(N);
      const reader = s.client(100 + i);
      waiting.push({ pending: s.acquire(reader, LOCK, 'shared'), client: reader, arrivedEpoch: entry.epoch });
      await s.advance(STEP_NS);
      await s.run(writers[i]!.release(w[i]!.grant!));
      await s.advance(STEP_NS);
      // Readers waiting on an epoch that has since flipped are in; I9: they release before the next flip.
      const now = s.entry(LOCK).epoch;
      for (const r of waiting.splice(0)) {
        if (r.arrivedEpoch !== now) {
          expect(r.pending.settled(), 'reader admitted by the flip').toBe(true);
          await s.run(r.client.release(r.pending.grant!));
        } else {
          expect(r.pending.settled()).toBe(false);
          waiting.push(r);
        }
      }
    }
    expect(waiting).toEqual([]);
    expect(s.entry(LOCK)).toMatchObject({ readers: 0, tail: 0n });
  });
});
