import { LockAbortedError } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import type { RecoverableFissLockClient } from '../src/recovery/recovery-client.js';
import { fissSim } from './support/fiss-sim.js';

type Sim = ReturnType<typeof fissSim>;

/** Steps the simulation, a millisecond at a time, until `acquire` settles; fails after 50 ms. */
async function settled<T>(sim: Sim, acquire: Promise<T>): Promise<T> {
  let done = false;
  const result = acquire.finally(() => (done = true));
  for (let k = 0; k < 50 && !done; k++) await sim.step(1_000_000);
  if (!done) throw new Error('acquire still pending after 50 ms');
  return result;
}

/**
 * RecoverableFissLockClient ends its inner acquire through a Stopper (one per acquire): a waiting
 * acquire must still end on the caller's real AbortSignal and on abandon(), both for a lock the
 * switch decides and for one beyond switchLocks, whose fallback manager takes a real AbortSignal.
 */
describe('RecoverableFissLockClient: a waiting acquire ends on a caller abort or abandon', () => {
  for (const lock of [1, 5]) {
    for (const how of ['caller', 'abandon'] as const) {
      it(`lock ${lock} (${lock >= 4 ? 'fallback manager' : 'switch'}), ${how}`, async () => {
        const sim = fissSim({ locks: 8, switchLocks: 4, computeNodes: 3, recoverableClients: true });
        const [a, b] = sim.nodes as [number, number];
        const holder = sim.client(a, 0) as RecoverableFissLockClient;
        const waiter = sim.client(b, 1) as RecoverableFissLockClient;
        const mode: LockMode = 'exclusive';
        const grant = await settled(sim, holder.acquire(lock, mode));
        const controller = new AbortController();
        let waited = false;
        const waiting = waiter.acquire(lock, mode, { signal: controller.signal }).then(
          () => undefined,
          (error: unknown) => error,
        );
        void waiting.finally(() => (waited = true));
        await sim.step(2_000_000);
        expect(waited).toBe(false);
        if (how === 'caller') controller.abort('caller went away');
        else waiter.abandon('machine failed');
        const error = await settled(sim, waiting);
        expect(error).toBeInstanceOf(LockAbortedError);
        expect((error as LockAbortedError).reason).toContain(how === 'caller' ? 'caller went away' : 'machine failed');
        const released = holder.release(grant);
        await sim.step(2_000_000);
        await released;
        await sim.stop();
      });
    }
  }
});
