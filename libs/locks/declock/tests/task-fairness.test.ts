import { describe, expect, it } from 'vitest';
import { checkTaskFairness } from '../src/index.js';
import type { AcquireTimes } from '../src/index.js';

const at = (client: string, mode: 'shared' | 'exclusive', invokeNs: number, endNs: number, granted = true): AcquireTimes => ({ client, lock: 0, mode, invokeNs, endNs, granted });

describe('the task-fairness checker (spec I6)', () => {
  it('passes a task-fair history: a later reader may join before an earlier reader', () => {
    const report = checkTaskFairness([at('w', 'exclusive', 0, 10), at('r1', 'shared', 5, 40), at('r2', 'shared', 20, 30), at('w2', 'exclusive', 25, 60)]);
    expect(report).toMatchObject({ ok: true, totalOvertakes: 0, acquiresConsidered: 4 });
  });

  it('fails when a reader is granted before an earlier writer (a broken history)', () => {
    const report = checkTaskFairness([at('w', 'exclusive', 0, 50), at('r', 'shared', 10, 20)]);
    expect(report.ok).toBe(false);
    expect(report.violations[0]).toMatchObject({ overtakes: 1, waiter: { client: 'w' }, firstOvertaker: { client: 'r' } });
  });

  it('fails when a writer overtakes a waiting reader, and honours slack and bypass bounds', () => {
    const history = [at('r', 'shared', 0, 50), at('w1', 'exclusive', 10, 20), at('w2', 'exclusive', 12, 30)];
    expect(checkTaskFairness(history).violationCount).toBe(1);
    expect(checkTaskFairness(history, { maxBypass: 2 }).ok).toBe(true);
    expect(checkTaskFairness(history, { slackNs: 15 }).ok).toBe(true);
  });

  it('counts overtakes of an acquire that gave up only until it left', () => {
    const history = [at('w', 'exclusive', 0, 15, false), at('r', 'shared', 10, 20)];
    expect(checkTaskFairness(history).ok).toBe(true);
  });
});
