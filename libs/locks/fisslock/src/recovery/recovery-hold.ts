import type { Clock, StopSignal } from '@lockfabric/ports';

/**
 * A latch a machine's recovery closes from S1's pause to S2 (spec §7.2: "clients block"). Waiting
 * on it is abortable; {@link RecoveryHold.clock} wraps a clock so a sleep that ends while the latch
 * is closed returns only when it opens — a client's attempt timer (T_ACQ) cannot fire in between,
 * so no attempt gives up on a request S2 is deciding.
 */
export class RecoveryHold {
  private waiters: (() => void)[] = [];
  private closedNow = false;

  get closed(): boolean {
    return this.closedNow;
  }

  close(): void {
    this.closedNow = true;
  }

  open(): void {
    this.closedNow = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves at once when open, else when opened; rejects with the signal's reason if aborted first. */
  whenOpen(signal?: StopSignal): Promise<void> {
    if (!this.closedNow) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(signal?.reason);
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** `base` whose sleeps, once elapsed, also wait for the latch to be open. */
  clock(base: Clock): Clock {
    return {
      nowNs: () => base.nowNs(),
      sleep: (ns, signal) => base.sleep(ns, signal).then(() => this.whenOpen(signal)),
    };
  }
}
