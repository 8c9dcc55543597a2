import { describe, expect, it } from 'vitest';
import { nextStep } from './attempt-policy.js';

const options = { culpritAttempts: 2, retryDelayMs: 100, maxRetryDelayMs: 350 };

describe('what follows a failed FissLock recovery attempt (the switch stays closed until S3)', () => {
  it('a compute node that fails its calls is given one more attempt, then declared dead and left out', () => {
    expect(nextStep({ attempt: 1, culprits: [4], switchAlive: true, laterQueued: false }, options)).toStrictEqual({ kind: 'retry', delayMs: 100 });
    expect(nextStep({ attempt: 2, culprits: [4, 2, 4], switchAlive: true, laterQueued: true }, options)).toStrictEqual({ kind: 'exclude', machines: [2, 4] });
  });

  it('a failing switch control plane is retried with a growing, capped delay while the switch lives and nothing is queued behind', () => {
    const delays = [1, 2, 3, 4].map((attempt) => nextStep({ attempt, culprits: [], switchAlive: true, laterQueued: false }, options));
    expect(delays).toStrictEqual([100, 200, 350, 350].map((delayMs) => ({ kind: 'retry', delayMs })));
  });

  it('never gives up while the switch waits on it: only a dead switch or a later recovery takes the work over', () => {
    expect(nextStep({ attempt: 50, culprits: [], switchAlive: true, laterQueued: false }, options).kind).toBe('retry');
    expect(nextStep({ attempt: 1, culprits: [], switchAlive: false, laterQueued: false }, options)).toMatchObject({ kind: 'defer' });
    expect(nextStep({ attempt: 1, culprits: [], switchAlive: true, laterQueued: true }, options)).toMatchObject({ kind: 'defer' });
  });
});
