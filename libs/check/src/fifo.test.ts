import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from '../tests/support/history-builder.js';
import { randomHistory } from '../tests/support/random-history.js';
import { TestRandom } from '../tests/support/seeded-random.js';
import { checkFifo, collectAcquires, describeFifoViolation } from './fifo.js';
import type { HistoryEvent } from './history.js';

describe('checkFifo', () => {
  it('passes waiters granted in arrival order', () => {
    const h = new HistoryBuilder()
      .acquire('0/1', 1, 'exclusive', 0, 5)
      .event('0/2', 'acquire', 1, 'exclusive', 'invoke', 10)
      .event('0/3', 'acquire', 1, 'exclusive', 'invoke', 20)
      .release('0/1', 1, 'exclusive', 30, 31)
      .event('0/2', 'acquire', 1, 'exclusive', 'ok', 35)
      .release('0/2', 1, 'exclusive', 40, 41)
      .event('0/3', 'acquire', 1, 'exclusive', 'ok', 45)
      .release('0/3', 1, 'exclusive', 50, 51);
    const report = checkFifo(h.build());
    expect(report).toMatchObject({ ok: true, maxOvertakesObserved: 0, totalOvertakes: 0, acquiresConsidered: 3 });
  });

  const overtake = () =>
    new HistoryBuilder()
      .acquire('0/1', 1, 'exclusive', 0, 5)
      .event('0/2', 'acquire', 1, 'exclusive', 'invoke', 10)
      .event('0/3', 'acquire', 1, 'exclusive', 'invoke', 20)
      .release('0/1', 1, 'exclusive', 30, 31)
      .event('0/3', 'acquire', 1, 'exclusive', 'ok', 35)
      .release('0/3', 1, 'exclusive', 40, 41)
      .event('0/2', 'acquire', 1, 'exclusive', 'ok', 45)
      .release('0/2', 1, 'exclusive', 50, 51);

  it('fails a later waiter granted first, and names both', () => {
    const report = checkFifo(overtake().build());
    expect(report.ok).toBe(false);
    expect(report.violationCount).toBe(1);
    const violation = report.violations[0]!;
    expect(violation.waiter).toMatchObject({ client: '0/2', invokeNs: 10, endNs: 45, granted: true });
    expect(violation.overtakers).toEqual([{ client: '0/3', lock: 1, mode: 'exclusive', invokeNs: 20, endNs: 35, granted: true }]);
    expect(describeFifoViolation(violation)).toContain('0/2 (exclusive, asked 10, granted 45) overtaken 1 times; first by 0/3');
  });

  it('lets a slack absorb small inversions in either time', () => {
    expect(checkFifo(overtake().build(), { slackNs: 9 }).ok).toBe(false);
    expect(checkFifo(overtake().build(), { slackNs: 10 }).ok).toBe(true);
  });

  it('counts overtakes against a bound k (bounded bypass)', () => {
    const h = new HistoryBuilder().acquire('0/1', 1, 'exclusive', 0, 5).event('0/9', 'acquire', 1, 'exclusive', 'invoke', 6);
    let t = 10;
    for (let i = 2; i <= 4; i++, t += 10) h.acquire(`0/${i}`, 1, 'exclusive', t, t + 5).release(`0/${i}`, 1, 'exclusive', t + 6, t + 7);
    h.event('0/9', 'acquire', 1, 'exclusive', 'ok', t + 10);
    const events = h.build();
    expect(checkFifo(events, { maxBypass: 3 }).ok).toBe(true);
    const tight = checkFifo(events, { maxBypass: 2 });
    expect(tight.ok).toBe(false);
    expect(tight.maxOvertakesObserved).toBe(3);
    expect(tight.violations[0]?.overtakers.map((a) => a.client)).toEqual(['0/2', '0/3', '0/4']);
  });

  it('counts an overtake of a waiter that later gave up, but not of acquires that never completed', () => {
    const gaveUp = new HistoryBuilder().acquireFails('0/1', 1, 'exclusive', 0, 100).hold('0/2', 1, 'exclusive', 50, 60);
    expect(checkFifo(gaveUp.build()).violations[0]?.waiter).toMatchObject({ client: '0/1', granted: false });
    const crashed = new HistoryBuilder().event('0/1', 'acquire', 1, 'exclusive', 'invoke', 0).hold('0/2', 1, 'exclusive', 50, 60);
    expect(checkFifo(crashed.build()).ok).toBe(true);
  });

  it('matches a brute-force count of the definition on random acquires', () => {
    const random = new TestRandom(99);
    for (let round = 0; round < 20; round++) {
      const events: HistoryEvent[] = [];
      for (let i = 0; i < 60; i++) {
        const invokeNs = random.int(200);
        const endNs = invokeNs + random.int(100);
        const client = `0/${i}`;
        const lock = random.int(2);
        events.push({ client, lock, mode: 'exclusive', op: 'acquire', phase: 'invoke', timeNs: invokeNs });
        events.push(random.next() < 0.8 ? { client, lock, mode: 'exclusive', op: 'acquire', phase: 'ok', timeNs: endNs } : { client, lock, mode: 'exclusive', op: 'acquire', phase: 'fail', timeNs: endNs, error: 'E' });
      }
      const slackNs = random.int(5);
      let expectedTotal = 0;
      let expectedMax = 0;
      for (const list of collectAcquires(events).values()) {
        for (const a of list) {
          const count = list.filter((b) => b.granted && b.invokeNs > a.invokeNs + slackNs && b.endNs < a.endNs - slackNs).length;
          expectedTotal += count;
          expectedMax = Math.max(expectedMax, count);
        }
      }
      const report = checkFifo(events, { slackNs, maxBypass: 1 });
      expect(report.totalOvertakes).toBe(expectedTotal);
      expect(report.maxOvertakesObserved).toBe(expectedMax);
      expect(report.ok).toBe(expectedMax <= 1);
    }
  });

  it('passes a random history of a FIFO lock and fails one of a lock that serves waiters in random order', () => {
    const options = { clients: 16, locks: 2, opsPerClient: 100 };
    expect(checkFifo(randomHistory({ seed: 4, ...options, policy: 'fifo' }), { slackNs: 50 }).ok).toBe(true);
    const unfair = checkFifo(randomHistory({ seed: 4, ...options, policy: 'random' }), { slackNs: 50 });
    expect(unfair.ok).toBe(false);
    expect(unfair.maxOvertakesObserved).toBeGreaterThan(1);
  });
});
