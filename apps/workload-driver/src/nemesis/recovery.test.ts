import { describe, expect, it } from 'vitest';
import { baselineThroughput, faultRecoveryNs, throughputRecoveryNs } from './recovery.js';

const B = 100; // bucket length (ns, to keep numbers small)
const buckets = (values: number[]) => values.map((throughput, i) => ({ startNs: i * B, throughput }));

describe('recovery from the throughput timeline', () => {
  it('takes the median of the buckets before the first fault as the baseline', () => {
    expect(baselineThroughput(buckets([10, 30, 20, 0, 5]), B, 300)).toBe(20);
    expect(baselineThroughput(buckets([10, 30, 20, 40]), B, 400)).toBe(25);
    expect(baselineThroughput(buckets([10]), B, 50)).toBe(0);
  });

  it('measures from the fault start to the first bucket back at half the baseline or more', () => {
    const t = buckets([20, 20, 20, 4, 0, 2, 15, 20]);
    expect(throughputRecoveryNs(t, B, 20, 320, 450)).toBe(280); // back in the bucket starting at 600
    expect(throughputRecoveryNs(t, B, 20, 100, 150)).toBe(0); // the window never dipped
    expect(throughputRecoveryNs(buckets([20, 20, 1, 1]), B, 20, 150, 250)).toBeUndefined(); // never back
    expect(throughputRecoveryNs(t, B, 0, 320, 450)).toBeUndefined();
  });
});

describe('recovery of one fault (survivors and the victim’s locks)', () => {
  // Two nodes' clients, 10 grants per 100 ns bucket each, from 0 to 1 000 ns; the fault at 300–400.
  const grantsOf = (client: string, fromNs: number, toNs: number, stepNs = 10) =>
    Array.from({ length: Math.floor((toNs - fromNs) / stepNs) }, (_, i) => ({ client, op: 'acquire', phase: 'ok', timeNs: fromNs + i * stepNs }));
  const base = { bucketNs: B, runStartNs: 0, firstFaultNs: 300, fault: { startNs: 300, endNs: 400 } };

  it('a kill: the survivors are measured against their own baseline, not the whole run’s', () => {
    // Node 2 (two thirds of the grants) dies at 300; node 1 slows down for two buckets, then runs as before.
    const history = [...grantsOf('1/0', 0, 300), ...grantsOf('1/0', 300, 500, 40), ...grantsOf('1/0', 500, 1_000), ...grantsOf('2/0', 0, 300, 5)];
    expect(faultRecoveryNs({ history, ...base, victimPrefix: '2/' })).toBe(200);
    // Counting the victim among the survivors (its pre-fault grants in their baseline) hides the recovery.
    expect(faultRecoveryNs({ history: [...history, { client: '2/0', op: 'acquire', phase: 'invoke', timeNs: 301 }], ...base })).toBeUndefined();
    // The old rule (the whole run's baseline) never sees the survivors back: they make half of it.
    const all = buckets([30, 30, 30, 2.5, 2.5, 10, 10, 10, 10, 10]);
    expect(throughputRecoveryNs(all, B, baselineThroughput(all, B, 300), 300, 400)).toBeUndefined();
  });

  it('a kill: waits for the victim’s locks to be granted again, and never recovers while one stays stuck', () => {
    const history = [...grantsOf('1/0', 0, 1_000), ...grantsOf('2/0', 0, 300)];
    expect(faultRecoveryNs({ history, ...base, victimPrefix: '2/' })).toBe(0); // no dip, nothing held
    expect(faultRecoveryNs({ history, ...base, locksBackAtNs: 720 })).toBe(420);
    expect(faultRecoveryNs({ history, ...base, locksBackAtNs: 'never' })).toBeUndefined();
  });

  it('a fault that ends after the last event still counts the clients that went on past its start', () => {
    const history = [...grantsOf('1/0', 0, 300), ...grantsOf('1/0', 300, 500, 40), ...grantsOf('1/0', 500, 1_000), ...grantsOf('2/0', 0, 300, 5)];
    expect(faultRecoveryNs({ history, ...base, fault: { startNs: 300, endNs: 5_000 }, victimPrefix: '2/' })).toBe(200);
  });

  it('survivors that never get back to half their own pace: no recovery', () => {
    const history = [...grantsOf('1/0', 0, 300), ...grantsOf('1/0', 300, 1_000, 40)];
    expect(faultRecoveryNs({ history, ...base })).toBeUndefined();
  });
});
