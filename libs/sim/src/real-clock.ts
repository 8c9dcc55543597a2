import type { Clock } from '@lockfabric/ports';

/** 2025-01-01T00:00:00Z in ms: a recent origin keeps nanosecond timestamps exact in a double. */
const ORIGIN_UNIX_MS = 1_735_689_600_000;

/**
 * Monotonic real time in ns since 2025-01-01 UTC. Every process on one machine reads the same
 * origin, so histories gathered from separate processes can be merged and checked.
 */
export class RealClock implements Clock {
  private readonly offsetNs = (performance.timeOrigin - ORIGIN_UNIX_MS) * 1e6;

  nowNs(): number {
    return Math.round(this.offsetNs + performance.now() * 1e6);
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
