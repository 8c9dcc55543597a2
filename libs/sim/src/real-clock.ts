import type { Clock } from '@lockfabric/ports';
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

  sleep(ns: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ns / 1e6));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
