import type { Clock, StopSignal } from '@lockfabric/ports';
import type { Scheduler } from './scheduler.js';

/** The Clock port over a Scheduler: virtual time under `sim`, real time under `embedded`. */
export class SchedulerClock implements Clock {
  constructor(private readonly scheduler: Scheduler) {}

  nowNs(): number {
    return this.scheduler.nowNs();
  }

  sleep(ns: number, signal?: StopSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      let done = false;
      const onAbort = () => {
        if (done) return;
        done = true;
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.scheduler.at(this.scheduler.nowNs() + Math.max(0, ns), () => {
        if (done) return;
        done = true;
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}
