import type { Clock } from '@lockfabric/ports';
import { NS_PER_MS } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { RateLimitedLog } from '../src/rate-limited-log.js';
import { memoryLogger } from './support.js';

class ManualClock implements Clock {
  ns = 0;
  nowNs(): number {
    return this.ns;
  }
  sleep(): Promise<void> {
    return Promise.resolve();
  }
}

describe('RateLimitedLog', () => {
  it('logs at most N lines per interval, then summarises what it held back', () => {
    const clock = new ManualClock();
    const logger = memoryLogger();
    const log = new RateLimitedLog(logger, clock, { maxLines: 3, intervalMs: 1_000 });
    for (let i = 0; i < 10; i++) log.warn(`line ${i}`);
    expect(logger.lines).toEqual(['WARN line 0', 'WARN line 1', 'WARN line 2']);
    clock.ns = 999 * NS_PER_MS;
    log.warn('still the same window');
    expect(logger.lines).toHaveLength(3);
    clock.ns = 1_000 * NS_PER_MS;
    log.warn('next window');
    expect(logger.lines.slice(3)).toEqual(['WARN (8 similar lines suppressed in the last 1000 ms)', 'WARN next window']);
  });
});

describe('MalformedInputCounter', () => {
  it('counts by source and names the sender in a bounded number of lines', () => {
    const logger = memoryLogger();
    const counter = new MalformedInputCounter({ logger, clock: new ManualClock(), maxLines: 2 });
    counter.record('lf.c.node.1.msg', new Error('bad varint'));
    counter.record('grpc /lockfabric.v1.MemoryService/Connect', new Error('not a batch'), 'ipv4:10.0.0.7:5000');
    counter.record('lf.c.node.1.msg', 'short frame');
    expect(counter.count('lf.c.node.1.msg')).toBe(2);
    expect(counter.count('nowhere')).toBe(0);
    expect(counter.count()).toBe(3);
    expect(counter.bySource()).toEqual({ 'lf.c.node.1.msg': 2, 'grpc /lockfabric.v1.MemoryService/Connect': 1 });
    expect(logger.lines).toEqual([
      'WARN dropped malformed input on lf.c.node.1.msg from an unknown sender: bad varint',
      'WARN dropped malformed input on grpc /lockfabric.v1.MemoryService/Connect from ipv4:10.0.0.7:5000: not a batch',
    ]);
  });
});
