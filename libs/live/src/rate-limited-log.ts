import type { Clock } from '@lockfabric/ports';
import { NS_PER_MS } from '@lockfabric/ports';
import type { Logger } from './logger.js';

export interface RateLimitOptions {
  /** At most this many lines per interval; the rest are counted and summarised. */
  readonly maxLines?: number;
  readonly intervalMs?: number;
}

/**
 * Warnings about input we do not control (garbage frames, full queues) can arrive at line rate;
 * logging each one would turn a misbehaving peer into a disk-filling one. This logs at most
 * `maxLines` per interval and then one summary line with the number it held back.
 */
export class RateLimitedLog {
  private readonly maxLines: number;
  private readonly intervalNs: number;
  private windowStartNs = Number.NEGATIVE_INFINITY;
  private linesInWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    options: RateLimitOptions = {},
  ) {
    this.maxLines = options.maxLines ?? 10;
    this.intervalNs = (options.intervalMs ?? 10_000) * NS_PER_MS;
  }

  warn(message: string): void {
    const nowNs = this.clock.nowNs();
    if (nowNs - this.windowStartNs >= this.intervalNs) {
      if (this.suppressed > 0) this.logger.warn(`(${this.suppressed} similar lines suppressed in the last ${this.intervalNs / NS_PER_MS} ms)`);
      this.windowStartNs = nowNs;
      this.linesInWindow = 0;
      this.suppressed = 0;
    }
    if (this.linesInWindow < this.maxLines) {
      this.linesInWindow++;
      this.logger.warn(message);
    } else {
      this.suppressed++;
    }
  }
}
