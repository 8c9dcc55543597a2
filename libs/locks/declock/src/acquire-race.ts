import type { AcquireDeadline } from '@lockfabric/locks-common';
import type { Clock } from '@lockfabric/ports';

export type Raced<T> = { readonly settled: true; readonly value: T } | { readonly settled: false; readonly error: unknown };

/**
 * Waits for `work` until the caller's deadline or abort signal, whichever comes first. On giving
 * up, `work` keeps running: a queued CQL waiter cannot leave the queue, so the caller hands the
 * rest of the work (take the grant, release it) to the background instead of resetting the lock.
 */
export function raceDeadline<T>(work: Promise<T>, clock: Clock, deadline: AcquireDeadline, signal?: AbortSignal): Promise<Raced<T>> {
  if (!Number.isFinite(deadline.atNs) && !signal) return work.then((value) => ({ settled: true, value }));
  return new Promise<Raced<T>>((resolve, reject) => {
    let done = false;
    const finish = () => {
      done = true;
      signal?.removeEventListener('abort', giveUp);
    };
    // The deadline timer is not cancelled when the work wins; it fires later and finds `done`.
    const arm = (ns: number) => void clock.sleep(ns).then(giveUp);
    function giveUp(): void {
      if (done) return;
      try {
        deadline.check();
      } catch (error) {
        finish();
        resolve({ settled: false, error });
        return;
      }
      // Woken a hair early (real time): wait out the rest.
      if (Number.isFinite(deadline.atNs)) arm(Math.max(1, deadline.remainingNs()));
    }
    work.then(
      (value) => {
        if (done) return;
        finish();
        resolve({ settled: true, value });
      },
      (error: unknown) => {
        if (done) return;
        finish();
        reject(error);
      },
    );
    signal?.addEventListener('abort', giveUp, { once: true });
    if (signal?.aborted) giveUp();
    else if (Number.isFinite(deadline.atNs)) arm(Math.max(0, deadline.remainingNs()));
  });
}
