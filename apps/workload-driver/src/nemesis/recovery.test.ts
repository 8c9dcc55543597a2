import { describe, expect, it } from 'vitest';
import { baselineThroughput, throughputRecoveryNs } from './recovery.js';

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
