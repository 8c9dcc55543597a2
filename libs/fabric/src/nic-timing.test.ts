import type { RemoteAddr, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { DEFAULT_NIC_TIMING, NicScheduler, nicServiceNs, validateNicTimingModel } from './nic-timing.js';
import type { NicTimingModel } from './nic-timing.js';

const addr = (offset: number, region = 0): RemoteAddr => ({ node: 0, region, rkey: 1, offset });
const cas = (offset: number): WorkRequest => ({ op: 'cas', addr: addr(offset), compare: 0n, swap: 1n });
const read = (offset: number, length = 8): WorkRequest => ({ op: 'read', addr: addr(offset), length });
const model: NicTimingModel = { ...DEFAULT_NIC_TIMING, readBaseNs: 50, perByteNs: 0, casNs: 150 };

describe('nicServiceNs', () => {
  it('prices atomics above READ/WRITE, 16-byte masked above 8-byte, and payload by the byte', () => {
    const m = DEFAULT_NIC_TIMING;
    const r8 = nicServiceNs(m, read(0, 8));
    expect(r8).toBeGreaterThanOrEqual(50);
    expect(r8).toBeLessThan(51);
    expect(nicServiceNs(m, read(0, 4096))).toBeGreaterThan(r8);
    expect(nicServiceNs(m, cas(0))).toBeGreaterThan(r8);
    const masked8 = nicServiceNs(m, { op: 'masked-faa', addr: addr(0), width: 8, add: 1n, boundaryMask: 0n });
    const masked16 = nicServiceNs(m, { op: 'masked-faa', addr: addr(0), width: 16, add: 1n, boundaryMask: 0n });
    expect(masked8).toBeGreaterThan(nicServiceNs(m, cas(0)));
    expect(masked16).toBeGreaterThan(masked8);
  });
});

describe('NicScheduler', () => {
  it('serializes atomics on the same address', () => {
    const s = new NicScheduler(model);
    expect(s.admit(cas(0), 1000)).toEqual({ startNs: 1000, doneNs: 1150 });
    expect(s.admit(cas(0), 1000)).toEqual({ startNs: 1150, doneNs: 1300 });
    expect(s.admit(cas(0), 1000)).toEqual({ startNs: 1300, doneNs: 1450 });
  });

  it('overlaps atomics on different addresses and reads of a busy address', () => {
    const s = new NicScheduler(model);
    expect(s.admit(cas(0), 1000)).toEqual({ startNs: 1000, doneNs: 1150 });
    expect(s.admit(cas(8), 1000)).toEqual({ startNs: 1000, doneNs: 1150 });
    expect(s.admit(cas(0), 1000).startNs).toBe(1150);
    // The NIC's address lock is per 8-byte word and per region.
    const t = new NicScheduler(model);
    t.admit(cas(0), 0);
    expect(t.admit({ ...cas(0), addr: addr(0, 1) }, 0).startNs).toBe(0);
    expect(t.admit(read(0), 0).startNs).toBe(0);
  });

  it('a 16-byte masked atomic holds both of its words', () => {
    const s = new NicScheduler(model);
    const wide: WorkRequest = { op: 'masked-cas', addr: addr(16), width: 16, compare: 0n, swap: 0n, compareMask: 0n, swapMask: 0n };
    const done = s.admit(wide, 0).doneNs;
    const t = new NicScheduler({ ...model, headOfLineBlocking: false });
    t.admit(wide, 0);
    expect(t.admit(cas(24), 0).startNs).toBe(done);
    expect(t.admit(cas(32), 0).startNs).toBe(0);
  });

  it('keeps FIFO start order: a waiting atomic holds back later requests unless head-of-line blocking is off', () => {
    const fifo = new NicScheduler(model);
    fifo.admit(cas(0), 0);
    expect(fifo.admit(cas(0), 10).startNs).toBe(150);
    expect(fifo.admit(read(64), 20).startNs).toBe(150);
    const starts = [fifo.admit(read(8), 30), fifo.admit(cas(16), 30)].map((slot) => slot.startNs);
    expect(starts).toEqual([150, 150]);

    const bypass = new NicScheduler({ ...model, headOfLineBlocking: false });
    bypass.admit(cas(0), 0);
    expect(bypass.admit(cas(0), 10).startNs).toBe(150);
    expect(bypass.admit(read(64), 20).startNs).toBe(20);
  });

  it('an IOPS cap spaces starts, in arrival order', () => {
    const s = new NicScheduler({ ...model, iopsCap: 10_000_000 }); // one start per 100 ns
    const starts = [0, 0, 0, 0].map(() => s.admit(read(0), 0).startNs);
    expect(starts).toEqual([0, 100, 200, 300]);
    expect(s.admit(read(0), 1000).startNs).toBe(1000); // an idle NIC starts at once
    expect(s.admit(read(0), 1010).startNs).toBe(1100);
  });

  it('completes the requests of one queue pair in order', () => {
    const s = new NicScheduler(model);
    const slowCas = s.admit(cas(0), 0, { queuePair: 1 });
    const fastRead = s.admit(read(8), 0, { queuePair: 1 });
    expect(fastRead.startNs).toBe(0);
    expect(fastRead.doneNs).toBe(slowCas.doneNs);
    expect(s.admit(read(8), 0, { queuePair: 2 }).doneNs).toBe(50);
    const batch = s.admitBatch([cas(40), read(8)], 500, { queuePair: 3 });
    expect(batch.doneNs).toBe(650);
  });

  it('is deterministic and keeps a bounded memory of addresses', () => {
    const run = () => {
      const s = new NicScheduler({ ...model, iopsCap: 50_000_000 });
      const out: number[] = [];
      let peak = 0;
      for (let i = 0; i < 50_000; i++) {
        const slot = s.admit(cas((i * 7919) % 1_000_000 * 8), i * 10, { queuePair: i % 64 });
        out.push(slot.startNs, slot.doneNs);
        peak = Math.max(peak, s.trackedEntries);
      }
      return { out, peak };
    };
    const a = run();
    expect(run().out).toEqual(a.out);
    expect(a.peak).toBeLessThan(5000);
  });

  it('fills fields left out of a partial model from the defaults', () => {
    const s = new NicScheduler({ casNs: 500 });
    expect(s.model).toEqual({ ...DEFAULT_NIC_TIMING, casNs: 500 });
    expect(s.admit(cas(0), 0).doneNs).toBe(500);
    expect(new NicScheduler().model).toEqual(DEFAULT_NIC_TIMING);
    expect(new NicScheduler({ faaNs: undefined }).model.faaNs).toBe(DEFAULT_NIC_TIMING.faaNs);
  });

  it('rejects an unusable model (validator fails on bad input)', () => {
    expect(() => validateNicTimingModel(DEFAULT_NIC_TIMING)).not.toThrow();
    expect(() => new NicScheduler({ ...model, casNs: -1 })).toThrow(/casNs/);
    expect(() => new NicScheduler({ ...model, perByteNs: Number.NaN })).toThrow(/perByteNs/);
    expect(() => new NicScheduler({ ...model, iopsCap: 0 })).toThrow(/iopsCap/);
  });
});
