import type { Clock, StopSignal } from '@lockfabric/ports';
import { machineClockOffsetNs } from './machine-clock-offset.js';

/** 2025-01-01T00:00:00Z in ns: a recent origin keeps timestamps within a few ns in a double. */
const ORIGIN_UNIX_NS = 1_735_689_600_000n * 1_000_000n;

let monotonicToOriginNs: bigint | undefined;

/**
 * Monotonic real time in ns since 2025-01-01 UTC. Every process on one machine reads the machine's
 * monotonic clock plus one shared offset (machine-clock-offset.ts), so histories gathered from
 * separate processes merge and check exactly; across machines they agree as well as the wall
 * clocks and one calibration each do.
 */
export class RealClock implements Clock {
  private readonly offsetNs = (monotonicToOriginNs ??= machineClockOffsetNs() - ORIGIN_UNIX_NS);

  nowNs(): number {
    return Number(process.hrtime.bigint() + this.offsetNs);
  }

  /**
   * Resolves no earlier than `ns` from now by this clock. Timers count whole milliseconds on their
   * own clock and can fire a fraction of a millisecond before a deadline read from `nowNs()`; a
   * caller that then finds its deadline not yet passed acts as if it had woken for another reason
   * (NetLock re-sent an ACQUIRE that way: libs/locks/netlock README). So an early timer is re-armed
   * for the rest.
   */
  sleep(ns: number, signal?: StopSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const untilNs = this.nowNs() + Math.max(0, ns);
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout;
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const arm = (waitNs: number) => {
        timer = setTimeout(() => {
          const leftNs = untilNs - this.nowNs();
          if (leftNs > 0) return arm(leftNs);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, waitNs / 1e6);
      };
      arm(Math.max(0, ns));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
