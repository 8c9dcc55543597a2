import type { Clock } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { consoleLogger, type Logger } from './logger.js';
import { RateLimitedLog, type RateLimitOptions } from './rate-limited-log.js';
import { errorMessage } from '@lockfabric/ports';

export interface MalformedInputOptions extends RateLimitOptions {
  readonly logger?: Logger;
  readonly clock?: Clock;
}

/**
 * Every decoder of the live substrate reports here (DESIGN §4): malformed input is counted by
 * source (a subject or a gRPC method), logged at a bounded rate with its sender, and dropped by
 * the caller, which keeps running.
 */
export class MalformedInputCounter {
  private readonly counts = new Map<string, number>();
  private readonly log: RateLimitedLog;

  constructor(options: MalformedInputOptions = {}) {
    this.log = new RateLimitedLog(options.logger ?? consoleLogger, options.clock ?? new RealClock(), options);
  }

  /** Counts one dropped input from `source`; `sender` is who sent it, when known. */
  record(source: string, error: unknown, sender?: string): void {
    this.counts.set(source, (this.counts.get(source) ?? 0) + 1);
    const reason = errorMessage(error);
    this.log.warn(`dropped malformed input on ${source} from ${sender ?? 'an unknown sender'}: ${reason}`);
  }

  /** Inputs dropped from `source`, or from every source when omitted. */
  count(source?: string): number {
    if (source !== undefined) return this.counts.get(source) ?? 0;
    let total = 0;
    for (const value of this.counts.values()) total += value;
    return total;
  }

  bySource(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}
