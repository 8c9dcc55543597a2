import { FabricAccessError } from '@lockfabric/ports';
import type { RemoteAddr, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { MAX_TRANSFER_BYTES } from './limits.js';
import { NodeMemory } from './node-memory.js';
import { U64_MAX, fieldBoundary, fieldMask, readU64LE, u64ToBytes } from './u64.js';

const INITIATOR = 7;

function setup(sizeBytes = 64) {
  const memory = new NodeMemory(1);
  const info = memory.register(sizeBytes);
  const at = (offset: number): RemoteAddr => ({ node: 1, region: info.region, rkey: info.rkey, offset });
  const run = (wr: WorkRequest) => memory.execute(wr, INITIATOR);
  const snapshot = () => {
    const c = run({ op: 'read', addr: at(0), length: sizeBytes });
    return c.data ?? new Uint8Array();
  };
  return { memory, info, at, run, snapshot };
}

describe('NodeMemory registration', () => {
  it('gives dense region ids and deterministic, non-trivial rkeys', () => {
    const a = new NodeMemory(3);
    const b = new NodeMemory(3);
    const r0 = a.register(16);
    const r1 = a.register(32);
    expect([r0.region, r1.region]).toEqual([0, 1]);
    expect(b.register(16).rkey).toBe(r0.rkey);
    expect(r0.rkey).not.toBe(r1.rkey);
    expect(r0.rkey).not.toBe(0);
    expect(r0.rkey).toBeLessThanOrEqual(0xffff_ffff);
    expect(new NodeMemory(4).register(16).rkey).not.toBe(r0.rkey);
    expect(a.regions()).toEqual([
      { node: 3, region: 0, rkey: r0.rkey, sizeBytes: 16 },
      { node: 3, region: 1, rkey: r1.rkey, sizeBytes: 32 },
    ]);
  });

  it('accepts a given rkey and rejects bad sizes and rkeys', () => {
    const m = new NodeMemory(0);
    expect(m.register(8, { rkey: 42 }).rkey).toBe(42);
    expect(() => m.register(0)).toThrow(RangeError);
    expect(() => m.register(-8)).toThrow(RangeError);
    expect(() => m.register(1.5)).toThrow(RangeError);
    expect(() => m.register(8, { rkey: 2 ** 32 })).toThrow(RangeError);
    expect(() => new NodeMemory(-1)).toThrow(RangeError);
  });

  it('reset zero-fills a region and keeps its rkey', () => {
    const { memory, info, at, run } = setup();
    run({ op: 'write', addr: at(8), data: u64ToBytes(99n) });
    memory.reset(info.region);
    expect(run({ op: 'cas', addr: at(8), compare: 0n, swap: 1n })).toEqual({ status: 'ok', value: 0n });
    expect(() => memory.reset(5)).toThrow(FabricAccessError);
  });
});

describe('NodeMemory verbs', () => {
  it('READ returns a copy and WRITE stores little-endian bytes', () => {
    const { at, run } = setup();
    expect(run({ op: 'write', addr: at(16), data: u64ToBytes(0x0102030405060708n) })).toEqual({ status: 'ok' });
    const c = run({ op: 'read', addr: at(16), length: 8 });
    expect(c.status).toBe('ok');
    expect([...(c.data ?? [])]).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    c.data?.fill(0);
    expect(readU64LE(run({ op: 'read', addr: at(16), length: 8 }).data ?? new Uint8Array())).toBe(0x0102030405060708n);
    // Byte-granular READ/WRITE need no alignment.
    expect(run({ op: 'write', addr: at(3), data: new Uint8Array([9]) }).status).toBe('ok');
    expect(run({ op: 'read', addr: at(3), length: 1 }).data).toEqual(new Uint8Array([9]));
  });

  it('CAS returns the old value and swaps only on a match', () => {
    const { at, run } = setup();
    expect(run({ op: 'cas', addr: at(0), compare: 0n, swap: 5n })).toEqual({ status: 'ok', value: 0n });
    expect(run({ op: 'cas', addr: at(0), compare: 4n, swap: 9n })).toEqual({ status: 'ok', value: 5n });
    expect(run({ op: 'cas', addr: at(0), compare: 5n, swap: U64_MAX })).toEqual({ status: 'ok', value: 5n });
    expect(run({ op: 'cas', addr: at(0), compare: 0n, swap: 0n }).value).toBe(U64_MAX);
  });

  it('a failed CAS leaves memory byte-for-byte unchanged', () => {
    const { at, run, snapshot } = setup();
    run({ op: 'write', addr: at(0), data: new Uint8Array(64).map((_, i) => i * 3) });
    const before = snapshot();
    expect(run({ op: 'cas', addr: at(8), compare: 1n, swap: 2n }).status).toBe('ok');
    expect(snapshot()).toEqual(before);
  });

  it('FAA returns the old value and wraps at 2^64', () => {
    const { at, run } = setup();
    expect(run({ op: 'faa', addr: at(8), add: 10n }).value).toBe(0n);
    expect(run({ op: 'faa', addr: at(8), add: U64_MAX }).value).toBe(10n); // adding 2^64-1 is -1
    expect(run({ op: 'faa', addr: at(8), add: 0n }).value).toBe(9n);
    run({ op: 'write', addr: at(16), data: u64ToBytes(U64_MAX) });
    expect(run({ op: 'faa', addr: at(16), add: 2n }).value).toBe(U64_MAX);
    expect(run({ op: 'faa', addr: at(16), add: 0n }).value).toBe(1n);
  });
});

describe('NodeMemory masked atomics', () => {
  it('masked CAS compares and swaps only masked bits and returns the full old value', () => {
    const { at, run } = setup();
    run({ op: 'write', addr: at(0), data: u64ToBytes(0xaabb_ccddn) });
    const hi = fieldMask(16, 16);
    const lo = fieldMask(0, 16);
    // Compare on the high half (0xaabb) succeeds even though the low half differs; swap only the low half.
    const c = run({ op: 'masked-cas', addr: at(0), width: 8, compare: 0xaabb_0000n, swap: 0xffff_1234n, compareMask: hi, swapMask: lo });
    expect(c).toEqual({ status: 'ok', value: 0xaabb_ccddn });
    expect(run({ op: 'faa', addr: at(0), add: 0n }).value).toBe(0xaabb_1234n);
    // Compare fails: nothing changes.
    run({ op: 'masked-cas', addr: at(0), width: 8, compare: 0n, swap: 0n, compareMask: hi, swapMask: U64_MAX });
    expect(run({ op: 'faa', addr: at(0), add: 0n }).value).toBe(0xaabb_1234n);
    // compareMask 0 is an unconditional masked store.
    run({ op: 'masked-cas', addr: at(0), width: 8, compare: 0n, swap: 0x77n << 16n, compareMask: 0n, swapMask: hi });
    expect(run({ op: 'faa', addr: at(0), add: 0n }).value).toBe(0x0077_1234n);
  });

  it('masked FAA: four 16-bit counters wrap independently', () => {
    const { at, run } = setup();
    const boundaries = [0, 16, 32, 48].reduce((m, s) => m | fieldBoundary(s, 16), 0n);
    expect(boundaries).toBe(0x8000_8000_8000_8000n);
    run({ op: 'write', addr: at(0), data: u64ToBytes(0x0003_ffff_7fff_fffen) });
    const add = 0x0001_0001_0001_0002n; // +1 to three fields, +2 to the lowest
    expect(run({ op: 'masked-faa', addr: at(0), width: 8, add, boundaryMask: boundaries }).value).toBe(0x0003_ffff_7fff_fffen);
    // 0xfffe+2 and 0xffff+1 wrap to 0 without carrying into their neighbours; 0x7fff+1 crosses into bit 15 normally.
    expect(run({ op: 'faa', addr: at(0), add: 0n }).value).toBe(0x0004_0000_8000_0000n);
    // The same add with a plain FAA carries across fields: the mutant the boundary mask must beat.
    run({ op: 'write', addr: at(8), data: u64ToBytes(0x0003_ffff_7fff_fffen) });
    run({ op: 'faa', addr: at(8), add });
    expect(run({ op: 'faa', addr: at(8), add: 0n }).value).toBe(0x0005_0000_8001_0000n);
  });

  it('masked FAA decrements a field by adding its all-ones value', () => {
    const { at, run } = setup();
    const rdrShift = 1;
    const rdrBits = 23;
    run({ op: 'write', addr: at(0), data: u64ToBytes((5n << 1n) | 1n | (0xabcn << 24n)) });
    const boundaryMask = fieldBoundary(0, 1) | fieldBoundary(rdrShift, rdrBits) | fieldBoundary(24, 40);
    run({ op: 'masked-faa', addr: at(0), width: 8, add: fieldMask(rdrShift, rdrBits), boundaryMask });
    expect(run({ op: 'faa', addr: at(0), add: 0n }).value).toBe((4n << 1n) | 1n | (0xabcn << 24n));
  });

  it('16-byte masked FAA keeps the two words as separate fields when told to', () => {
    const { at, run } = setup();
    run({ op: 'write', addr: at(0), data: u64ToBytes(U64_MAX) });
    // Boundary at bit 63: adding 1 to the low word wraps it without touching the high word.
    run({ op: 'masked-faa', addr: at(0), width: 16, add: 1n | (1n << 64n), boundaryMask: 1n << 63n });
    const c = run({ op: 'masked-faa', addr: at(0), width: 16, add: 0n, boundaryMask: 0n });
    expect(c.value).toBe(1n << 64n);
    // Without the boundary the carry crosses into the high word.
    run({ op: 'write', addr: at(16), data: u64ToBytes(U64_MAX) });
    run({ op: 'masked-faa', addr: at(16), width: 16, add: 1n, boundaryMask: 0n });
    expect(run({ op: 'masked-faa', addr: at(16), width: 16, add: 0n, boundaryMask: 0n }).value).toBe(1n << 64n);
  });

  it('16-byte masked CAS is atomic across both words', () => {
    const { at, run } = setup();
    const low = U64_MAX;
    const high = U64_MAX << 64n;
    run({ op: 'write', addr: at(0), data: u64ToBytes(1n) });
    run({ op: 'write', addr: at(8), data: u64ToBytes(2n) });
    const read128 = () => run({ op: 'masked-faa', addr: at(0), width: 16, add: 0n, boundaryMask: 0n }).value;
    expect(read128()).toBe(1n | (2n << 64n));

    // Compare on the high word fails → the low word is not written.
    let c = run({ op: 'masked-cas', addr: at(0), width: 16, compare: 3n << 64n, swap: 9n, compareMask: high, swapMask: low });
    expect(c.value).toBe(1n | (2n << 64n));
    expect(read128()).toBe(1n | (2n << 64n));
    // Compare on the high word succeeds → the low word is written.
    c = run({ op: 'masked-cas', addr: at(0), width: 16, compare: 2n << 64n, swap: 9n, compareMask: high, swapMask: low });
    expect(read128()).toBe(9n | (2n << 64n));
    // And vice versa: the low word gates the high word.
    run({ op: 'masked-cas', addr: at(0), width: 16, compare: 8n, swap: 7n << 64n, compareMask: low, swapMask: high });
    expect(read128()).toBe(9n | (2n << 64n));
    run({ op: 'masked-cas', addr: at(0), width: 16, compare: 9n, swap: 7n << 64n, compareMask: low, swapMask: high });
    expect(read128()).toBe(9n | (7n << 64n));
    // Both words swap together on a full compare.
    run({ op: 'masked-cas', addr: at(0), width: 16, compare: 9n | (7n << 64n), swap: 5n | (6n << 64n), compareMask: low | high, swapMask: low | high });
    expect(read128()).toBe(5n | (6n << 64n));
  });
});

describe('NodeMemory errors complete with a status and leave memory untouched', () => {
  const cases: [string, (s: ReturnType<typeof setup>) => WorkRequest, string, RegExp][] = [
    ['misaligned CAS', (s) => ({ op: 'cas', addr: s.at(4), compare: 0n, swap: 1n }), 'misaligned', /not 8-byte aligned/],
    ['misaligned FAA', (s) => ({ op: 'faa', addr: s.at(12), add: 1n }), 'misaligned', /aligned/],
    ['16-byte masked CAS on an 8-byte boundary', (s) => ({ op: 'masked-cas', addr: s.at(8), width: 16, compare: 0n, swap: 1n, compareMask: 0n, swapMask: 1n }), 'misaligned', /16-byte aligned/],
    ['CAS past the end', (s) => ({ op: 'cas', addr: s.at(64), compare: 0n, swap: 1n }), 'out-of-bounds', /outside region 0/],
    ['16-byte FAA straddling the end', (s) => ({ op: 'masked-faa', addr: s.at(48 + 16), width: 16, add: 1n, boundaryMask: 0n }), 'out-of-bounds', /outside/],
    ['WRITE straddling the end', (s) => ({ op: 'write', addr: s.at(60), data: new Uint8Array(8).fill(1) }), 'out-of-bounds', /8 bytes at offset 60/],
    ['READ at a negative offset', (s) => ({ op: 'read', addr: s.at(-8), length: 8 }), 'out-of-bounds', /outside/],
    ['zero-length READ', (s) => ({ op: 'read', addr: s.at(0), length: 0 }), 'bad-request', /positive/],
    ['huge READ', (s) => ({ op: 'read', addr: s.at(0), length: 2 ** 21 }), 'bad-request', /limit/],
    ['empty WRITE', (s) => ({ op: 'write', addr: s.at(0), data: new Uint8Array(0) }), 'bad-request', /positive/],
    ['wrong rkey', (s) => ({ op: 'cas', addr: { ...s.at(0), rkey: s.info.rkey ^ 1 }, compare: 0n, swap: 1n }), 'bad-rkey', /from node 7 does not match region 0/],
    ['unknown region', (s) => ({ op: 'faa', addr: { ...s.at(0), region: 3 }, add: 1n }), 'unknown-region', /has no region 3/],
    ['unknown node', (s) => ({ op: 'write', addr: { ...s.at(0), node: 2 }, data: u64ToBytes(1n) }), 'unknown-node', /for node 2 reached the NIC of node 1/],
    ['width 4', (s) => ({ op: 'masked-faa', addr: s.at(0), width: 4 as 8, add: 1n, boundaryMask: 0n }), 'bad-request', /width must be 8 or 16/],
    ['negative swap', (s) => ({ op: 'cas', addr: s.at(0), compare: 0n, swap: -1n }), 'bad-request', /swap -0x1 is not an unsigned 64-bit/],
    ['65-bit add', (s) => ({ op: 'faa', addr: s.at(0), add: 1n << 64n }), 'bad-request', /unsigned 64-bit/],
    ['129-bit masked swap', (s) => ({ op: 'masked-cas', addr: s.at(0), width: 16, compare: 0n, swap: 1n << 128n, compareMask: 0n, swapMask: 1n }), 'bad-request', /128-bit/],
    ['number instead of bigint', (s) => ({ op: 'faa', addr: s.at(0), add: 1 as unknown as bigint }), 'bad-request', /must be a bigint/],
    ['unknown opcode', (s) => ({ op: 'swap', addr: s.at(0) }) as unknown as WorkRequest, 'bad-request', /unknown verb opcode "swap"/],
    ['fractional offset', (s) => ({ op: 'read', addr: s.at(0.5), length: 1 }), 'bad-request', /whole number/],
  ];

  it.each(cases)('%s', (_name, make, status, detail) => {
    const s = setup();
    s.run({ op: 'write', addr: s.at(0), data: new Uint8Array(64).fill(0x5a) });
    const before = s.snapshot();
    const c = s.run(make(s));
    expect(c.status).toBe(status);
    expect(c.detail).toMatch(detail);
    expect(c.value).toBeUndefined();
    expect(c.data).toBeUndefined();
    expect(s.snapshot()).toEqual(before);
  });
});

describe('NodeMemory CPU access', () => {
  it('loads and stores aligned words and shares them with verbs', () => {
    const { memory, at, run } = setup();
    memory.cpuStore(at(24), 0xdeadn);
    expect(run({ op: 'cas', addr: at(24), compare: 0xdeadn, swap: 1n }).value).toBe(0xdeadn);
    expect(memory.cpuLoad(at(24))).toBe(1n);
    // The CPU does not go through the NIC's protection keys.
    expect(memory.cpuLoad({ ...at(24), rkey: 0 })).toBe(1n);
  });

  it('throws FabricAccessError on bad addresses and values', () => {
    const { memory, at } = setup();
    const status = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof FabricAccessError ? e.status : 'other';
      }
      return 'none';
    };
    expect(status(() => memory.cpuLoad(at(4)))).toBe('misaligned');
    expect(status(() => memory.cpuLoad(at(64)))).toBe('out-of-bounds');
    expect(status(() => memory.cpuLoad({ ...at(0), region: 9 }))).toBe('unknown-region');
    expect(status(() => memory.cpuLoad({ ...at(0), node: 5 }))).toBe('unknown-node');
    expect(status(() => memory.cpuStore(at(0), -1n))).toBe('bad-request');
    expect(status(() => memory.cpuLoad(at(0)))).toBe('none');
  });
});

describe('NodeMemory footprint', () => {
  it('10 million 8-byte lock words cost nothing until stored to, then about 80 MB of ArrayBuffer', () => {
    const before = process.memoryUsage().arrayBuffers;
    const memory = new NodeMemory(0);
    const info = memory.register(10_000_000 * 8);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1_000_000);
    expect(memory.allocatedBytes()).toBe(0);
    const chunk = new Uint8Array(MAX_TRANSFER_BYTES).fill(1);
    for (let offset = 0; offset < info.sizeBytes; offset += chunk.length) {
      const data = chunk.subarray(0, Math.min(chunk.length, info.sizeBytes - offset));
      expect(memory.execute({ op: 'write', addr: { node: 0, region: info.region, rkey: info.rkey, offset }, data }, 1).status).toBe('ok');
    }
    const grown = process.memoryUsage().arrayBuffers - before;
    expect(memory.allocatedBytes()).toBe(80_000_000);
    expect(grown).toBeGreaterThanOrEqual(80_000_000);
    expect(grown).toBeLessThan(90_000_000);
    const last: RemoteAddr = { node: 0, region: info.region, rkey: info.rkey, offset: (10_000_000 - 1) * 8 };
    expect(memory.execute({ op: 'faa', addr: last, add: 3n }, 1)).toEqual({ status: 'ok', value: 0x0101_0101_0101_0101n });
    expect(memory.cpuLoad(last)).toBe(0x0101_0101_0101_0104n);
  });
});
