import type { RemoteAddr } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { NicCounters } from './nic-counters.js';
import { Nic } from './nic.js';
import { NodeMemory } from './node-memory.js';
import { readU64LE, u64ToBytes } from './u64.js';

function setup(options: { maskedAtomics?: boolean } = {}) {
  const memory = new NodeMemory(1);
  const info = memory.register(64);
  const nic = new Nic(memory, options);
  const at = (offset: number): RemoteAddr => ({ node: 1, region: info.region, rkey: info.rkey, offset });
  return { memory, nic, info, at };
}

describe('Nic.executeBatch', () => {
  it('executes one doorbell in order, each request seeing the effects of the ones before it', () => {
    const { nic, at } = setup();
    const completions = nic.executeBatch(
      [
        { op: 'write', addr: at(0), data: u64ToBytes(5n) },
        { op: 'read', addr: at(0), length: 8 },
        { op: 'cas', addr: at(0), compare: 5n, swap: 6n },
        { op: 'faa', addr: at(0), add: 10n },
        { op: 'read', addr: at(0), length: 8 },
      ],
      2,
    );
    expect(completions.map((c) => c.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(readU64LE(completions[1]?.data ?? new Uint8Array())).toBe(5n);
    expect(completions[2]?.value).toBe(5n);
    expect(completions[3]?.value).toBe(6n);
    expect(readU64LE(completions[4]?.data ?? new Uint8Array())).toBe(16n);
  });

  it('a failed request gets its own status and the rest of the batch still runs', () => {
    const { nic, at } = setup();
    const completions = nic.executeBatch(
      [
        { op: 'cas', addr: at(4), compare: 0n, swap: 1n },
        { op: 'faa', addr: at(8), add: 1n },
      ],
      2,
    );
    expect(completions.map((c) => c.status)).toEqual(['misaligned', 'ok']);
    expect(nic.executeBatch([], 2)).toEqual([]);
  });

  it('refuses masked atomics when the NIC lacks them, leaving memory alone', () => {
    const { nic, at } = setup({ maskedAtomics: false });
    expect(nic.capabilities()).toEqual([]);
    const c = nic.execute({ op: 'masked-faa', addr: at(0), width: 8, add: 1n, boundaryMask: 0n }, 2);
    expect(c.status).toBe('unsupported');
    expect(c.detail).toMatch(/no extended \(masked\) atomics/);
    expect(nic.execute({ op: 'faa', addr: at(0), add: 0n }, 2).value).toBe(0n);
    expect(setup().nic.capabilities()).toEqual(['masked-atomics']);
  });
});

describe('NicCounters', () => {
  it('counts by opcode, initiator, lock, doorbell, error status and bytes', () => {
    const { nic, at } = setup();
    nic.executeBatch(
      [
        { op: 'read', addr: at(0), length: 16, lock: 7 },
        { op: 'cas', addr: at(0), compare: 0n, swap: 1n, lock: 7 },
        { op: 'write', addr: at(8), data: new Uint8Array(8), lock: 9 },
      ],
      2,
    );
    nic.execute({ op: 'faa', addr: at(0), add: 1n }, 3);
    nic.execute({ op: 'cas', addr: at(3), compare: 0n, swap: 1n, lock: 7 }, 3);
    nic.execute({ op: 'read', addr: { ...at(0), rkey: 1 }, length: 8 }, 1);
    nic.execute({ op: 'masked-cas', addr: at(0), width: 16, compare: 0n, swap: 0n, compareMask: 0n, swapMask: 0n }, 1);

    const snap = nic.counters.snapshot();
    expect(snap).toEqual({
      node: 1,
      verbs: 7,
      doorbells: 5,
      byOpcode: { read: 2, write: 1, cas: 2, faa: 1, 'masked-cas': 1, 'masked-faa': 0 },
      byInitiator: {
        '1': { verbs: 2, byOpcode: { read: 1, write: 0, cas: 0, faa: 0, 'masked-cas': 1, 'masked-faa': 0 } },
        '2': { verbs: 3, byOpcode: { read: 1, write: 1, cas: 1, faa: 0, 'masked-cas': 0, 'masked-faa': 0 } },
        '3': { verbs: 2, byOpcode: { read: 0, write: 0, cas: 1, faa: 1, 'masked-cas': 0, 'masked-faa': 0 } },
      },
      byLock: { '7': 3, '9': 1 },
      loopbackVerbs: 2,
      errors: 2,
      errorsByStatus: { misaligned: 1, 'bad-rkey': 1 },
      bytesRead: 16,
      bytesWritten: 8,
    });
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
    expect(nic.counters.lockVerbs(7)).toBe(3);
    expect(nic.counters.lockVerbs(8)).toBe(0);
  });

  it('perLock: false keeps no state per lock, however many locks the verbs name', () => {
    const { memory, at } = setup();
    const run = (counters: NicCounters) => {
      const nic = new Nic(memory, { counters });
      for (let lock = 0; lock < 5_000; lock++) nic.execute({ op: 'faa', addr: at(0), add: 1n, lock }, 2);
      return counters.snapshot();
    };
    const lean = run(new NicCounters(4, { perLock: false }));
    expect(lean.verbs).toBe(5_000);
    expect(lean.byOpcode.faa).toBe(5_000);
    expect(Object.keys(lean.byLock)).toHaveLength(0);
    // The default (what a run over 10 M locks must not use) keeps one entry per lock touched.
    expect(Object.keys(run(new NicCounters(4)).byLock)).toHaveLength(5_000);
  });

  it('reset clears everything, and the snapshot is detached from later counting', () => {
    const counters = new NicCounters(4);
    const { memory, at } = setup();
    const nic = new Nic(memory, { counters });
    nic.execute({ op: 'faa', addr: at(0), add: 1n, lock: 1 }, 2);
    const before = counters.snapshot();
    nic.execute({ op: 'faa', addr: at(0), add: 1n, lock: 1 }, 2);
    expect(before.verbs).toBe(1);
    expect(before.byLock).toEqual({ '1': 1 });
    counters.reset();
    const after = counters.snapshot();
    expect(after.verbs).toBe(0);
    expect(after.doorbells).toBe(0);
    expect(after.byInitiator).toEqual({});
    expect(after.byLock).toEqual({});
    expect(after.byOpcode.faa).toBe(0);
  });
});
