import type { RemoteAddr, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { PAPER_COST_MODEL } from './cost-model.js';
import { NicScheduler, issueCostNs } from './nic-timing.js';
import type { NicTimingModel } from './nic-timing.js';

const addr = (offset: number): RemoteAddr => ({ node: 0, region: 0, rkey: 1, offset });
const cas = (i: number): WorkRequest => ({ op: 'cas', addr: addr(i * 8), compare: 0n, swap: 1n });
const read = (i: number): WorkRequest => ({ op: 'read', addr: addr(i * 8), length: 8 });

/**
 * The guard under test: in every window of `windowNs` starting at a request's start, no more
 * requests started than the ceiling allows (one more for the request at the window's edge).
 * Returns the worst window's excess over the allowance (≤ 0: the ceiling held).
 */
function worstExcess(startsNs: readonly number[], iops: number, windowNs: number): number {
  const sorted = [...startsNs].sort((a, b) => a - b);
  const allowed = Math.floor((windowNs * iops) / 1e9) + 1;
  let worst = -allowed;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (sorted[j]! < sorted[i]! - windowNs + 1e-9) j++;
    worst = Math.max(worst, i - j + 1 - allowed);
  }
  return worst;
}

/** A flood of distinct-address requests, all arriving at once: only the ceiling can space them. */
function flood(scheduler: NicScheduler, make: (i: number) => WorkRequest, n: number): number[] {
  return Array.from({ length: n }, (_, i) => scheduler.admit(make(i), 0).startNs);
}

const MODEL: NicTimingModel = PAPER_COST_MODEL.nic;

/** Test-only broken NIC: charges atomics at the READ/WRITE price, as if the atomic ceiling were missing. */
class AtomicsAtReadPrice extends NicScheduler {
  protected override issueCost(wr: WorkRequest): number {
    return issueCostNs(this.model, wr.op === 'cas' ? read(0) : wr);
  }
}

describe('NIC inbound ceiling by verb class', () => {
  it('never starts more atomics per window than atomicIops, nor more READs than readWriteIops', () => {
    const atomics = flood(new NicScheduler(MODEL), cas, 4_000);
    const reads = flood(new NicScheduler(MODEL), read, 4_000);
    for (const windowNs of [1_000, 10_000, 100_000]) {
      expect(worstExcess(atomics, MODEL.atomicIops!, windowNs)).toBeLessThanOrEqual(0);
      expect(worstExcess(reads, MODEL.readWriteIops!, windowNs)).toBeLessThanOrEqual(0);
    }
    // and the ceiling is reached, not undershot: the flood drains at the ceiling's rate
    expect(atomics.length / (Math.max(...atomics) / 1e9)).toBeGreaterThan(0.99 * MODEL.atomicIops!);
    expect(reads.length / (Math.max(...reads) / 1e9)).toBeGreaterThan(0.99 * MODEL.readWriteIops!);
  });

  it('catches the mutant that charges atomics at the READ price', () => {
    const atomics = flood(new AtomicsAtReadPrice(MODEL), cas, 4_000);
    expect(worstExcess(atomics, MODEL.atomicIops!, 10_000)).toBeGreaterThan(0);
  });

  it('a mixed stream shares one budget: an atomic takes the issue time of readWriteIops/atomicIops READs', () => {
    const nic = new NicScheduler(MODEL);
    const starts = Array.from({ length: 3_000 }, (_, i) => nic.admit(i % 3 === 0 ? cas(i) : read(i), 0).startNs);
    const expectedNs = 1_000 * (1e9 / MODEL.atomicIops!) + 2_000 * (1e9 / MODEL.readWriteIops!);
    expect(Math.max(...starts)).toBeGreaterThan(expectedNs * 0.99);
    expect(Math.max(...starts)).toBeLessThanOrEqual(expectedNs);
    expect(nic.load).toMatchObject({ admitted: 3_000, throttled: 2_999, readWrites: 2_000, throttledReadWrites: 2_000 });
    expect(nic.load.busyNs).toBeCloseTo(expectedNs, 3);
  });

  it('without ceilings (the ideal NIC) the same flood starts at once, as before', () => {
    const { atomicIops: _a, readWriteIops: _r, ...uncapped } = MODEL;
    const nic = new NicScheduler(uncapped);
    const starts = flood(nic, read, 1_000);
    expect(new Set(starts)).toEqual(new Set([0]));
    expect(nic.load).toMatchObject({ admitted: 1_000, throttled: 0, busyNs: 0 });
  });
});
