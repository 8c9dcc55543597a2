import { describe, expect, it } from 'vitest';
import { EPOCH_TIME_SHIFT, EpochSource, epochFloor } from './epoch-source.js';

const MS = 1_000_000;

describe('EpochSource', () => {
  it('issues strictly increasing epochs, also many within one millisecond', () => {
    const epochs = new EpochSource();
    const issued = Array.from({ length: 1_000 }, () => epochs.next(5 * MS));
    for (let i = 1; i < issued.length; i++) expect(issued[i]).toBe((issued[i - 1] as bigint) + 1n);
    expect(issued[0]).toBe(5n << EPOCH_TIME_SHIFT);
  });

  it('jumps to the time floor when time has moved on', () => {
    const epochs = new EpochSource();
    epochs.next(5 * MS);
    expect(epochs.next(9 * MS)).toBe(9n << EPOCH_TIME_SHIFT);
  });

  it('never goes backwards when the clock does', () => {
    const epochs = new EpochSource();
    const high = epochs.next(9 * MS);
    expect(epochs.next(1 * MS)).toBe(high + 1n);
  });

  it('puts a restarted coordinator, which remembers nothing, above everything its predecessor issued', () => {
    const before = new EpochSource();
    let last = 0n;
    for (let t = 0; t < 10_000; t++) last = before.next(1_000 * MS + t * 1_000); // 10 000 changes in 10 ms
    const restarted = new EpochSource();
    expect(restarted.next(1_011 * MS)).toBeGreaterThan(last);
  });

  it('goes above an observed epoch even when its clock is behind', () => {
    const restarted = new EpochSource();
    restarted.observe(epochFloor(2_000 * MS) + 7n);
    expect(restarted.next(1_000 * MS)).toBe(epochFloor(2_000 * MS) + 8n);
    restarted.observe(3n); // lower epochs change nothing
    expect(restarted.current).toBe(epochFloor(2_000 * MS) + 8n);
  });

  it('shows the limit of the time floor alone: a clock behind by more than the downtime goes backwards', () => {
    // This is why the coordinator also listens to ctl.membership (README, "Epochs across restarts").
    const before = new EpochSource();
    const last = before.next(2_000 * MS);
    expect(new EpochSource().next(1_000 * MS)).toBeLessThan(last);
  });

  it('has a zero floor before the clock origin', () => {
    expect(epochFloor(-5 * MS)).toBe(0n);
    expect(new EpochSource().next(-5 * MS)).toBe(1n);
  });
});
