import type { Clock } from '@lockfabric/ports';
import { setImmediate as nextMacrotask } from 'node:timers/promises';

interface Timer {
  readonly atNs: number;
  readonly seq: number;
  readonly fire: () => void;
}

/**
 * Virtual time for runner tests: `sleep` parks the caller until `run` advances the clock to its
 * wake-up time. Time only moves when every runnable promise chain has settled, so a run is
 * deterministic and takes no wall-clock time.
 */
export class VirtualTime {
  private nowNsValue = 0;
  private seq = 0;
  private readonly timers: Timer[] = [];
  sleeps = 0;

  readonly clock: Clock = {
    nowNs: () => this.nowNsValue,
    sleep: (ns, signal) => {
      this.sleeps++;
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const timer: Timer = {
          atNs: this.nowNsValue + Math.max(0, ns),
          seq: this.seq++,
          fire: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          const index = this.timers.indexOf(timer);
          if (index >= 0) this.timers.splice(index, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.timers.push(timer);
      });
    },
  };

  /** Runs timers in time order until `done` settles; fails if everything is blocked with no timer left. */
  async run<T>(done: Promise<T>): Promise<T> {
    let settled = false;
    const watched = done.finally(() => {
      settled = true;
    });
    watched.catch(() => {});
    for (;;) {
      // A macrotask turn lets every pending promise reaction run before time moves.
      await nextMacrotask();
      if (settled) return watched;
      if (this.timers.length === 0) throw new Error(`deadlock at ${this.nowNsValue} ns: nothing to wake and the run is not done`);
      let first = 0;
      for (let i = 1; i < this.timers.length; i++) {
        const a = this.timers[i] as Timer;
        const b = this.timers[first] as Timer;
        if (a.atNs < b.atNs || (a.atNs === b.atNs && a.seq < b.seq)) first = i;
      }
      const [timer] = this.timers.splice(first, 1) as [Timer];
      this.nowNsValue = timer.atNs;
      timer.fire();
    }
  }
}
