import type { Grant, LockClient, RemoteAddr, Verbs } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { PhaseTiming } from './phase-timing.js';
import { VerbAccounting } from './verb-accounting.js';

/**
 * The bench wrappers run on every acquire, release and verb of a `sim` run. These tests count the
 * stack frames a wrapper puts between its caller and the wrapped port (a count, not a timing): one,
 * the wrapper's own method, with no closure built and called per operation on the way.
 */

/** Frames on the stack when `probe` runs, counted from a fresh `Error`. */
function depth(): number {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = Infinity;
  try {
    return (new Error().stack ?? '').split('\n').length;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Frames the wrapped call adds over calling `inner` straight from the same place. */
function extraFrames(wrap: (inner: LockClient<Grant>) => LockClient<Grant>): { acquire: number; release: number } {
  let seen = 0;
  const inner: LockClient<Grant> = {
    acquire: (lock, mode) => ((seen = depth()), Promise.resolve({ lock, mode })),
    release: () => ((seen = depth()), Promise.resolve()),
  };
  const callAcquire = (client: LockClient<Grant>) => void client.acquire(1, 'exclusive').catch(() => undefined);
  const callRelease = (client: LockClient<Grant>) => void client.release({ lock: 1, mode: 'exclusive' }).catch(() => undefined);
  const wrapped = wrap(inner);
  callAcquire(inner);
  const bareAcquire = seen;
  callAcquire(wrapped);
  const acquire = seen - bareAcquire;
  callRelease(inner);
  const bareRelease = seen;
  callRelease(wrapped);
  return { acquire, release: seen - bareRelease };
}

/** The wrapper shape these replaced: the inner call made through a closure handed to a helper. */
const closureWrapperMutant = (inner: LockClient<Grant>): LockClient<Grant> => {
  const within = <T>(call: () => Promise<T>): Promise<T> => call().then((value) => value);
  return { acquire: (lock, mode, options) => within(() => inner.acquire(lock, mode, options)), release: (grant) => within(() => inner.release(grant)) };
};

describe('bench wrappers: frames per operation and per verb', () => {
  it('the count catches a wrapper that calls through a closure (mutant)', () => {
    expect(extraFrames(closureWrapperMutant)).toEqual({ acquire: 3, release: 3 });
  });

  it('PhaseTiming and VerbAccounting.wrapClient each add one frame per acquire and release', () => {
    const timing = new PhaseTiming();
    expect(extraFrames(timing.forClient<Grant>({ nowNs: () => 0, sleep: () => Promise.resolve() }).wrap)).toEqual({ acquire: 1, release: 1 });
    expect(extraFrames((inner) => new VerbAccounting().wrapClient(inner, () => undefined))).toEqual({ acquire: 1, release: 1 });
  });

  it('VerbAccounting.wrapVerbs adds one frame per verb', () => {
    let seen = 0;
    const inner = {
      cas: () => ((seen = depth()), Promise.resolve(0n)),
    } as unknown as Verbs;
    const addr: RemoteAddr = { node: 1, region: 0, rkey: 0, offset: 0 };
    void inner.cas(addr, 0n, 1n);
    const bare = seen;
    void new VerbAccounting().wrapVerbs(inner, () => 'acquire').cas(addr, 0n, 1n);
    expect(seen - bare).toBe(1);
  });
});

describe('VerbAccounting counts', () => {
  it('counts by phase and opcode, keeps merged zeros and unknown opcodes, and round-trips its flat form', () => {
    const accounting = new VerbAccounting();
    let phase: 'acquire' | 'release' | 'cs' | undefined = 'acquire';
    const inner = {
      cas: () => Promise.resolve(0n),
      read: () => Promise.resolve(new Uint8Array(8)),
      post: () => Promise.resolve([]),
    } as unknown as Verbs;
    const verbs = accounting.wrapVerbs(inner, () => phase);
    const addr: RemoteAddr = { node: 1, region: 0, rkey: 0, offset: 0 };
    void verbs.cas(addr, 0n, 1n);
    void verbs.cas(addr, 0n, 1n);
    void verbs.post([{ op: 'masked-faa', addr, width: 8, add: 1n, boundaryMask: 0n }], {});
    phase = 'release';
    void verbs.read(addr, 8);
    phase = undefined;
    void verbs.read(addr, 8);
    accounting.merge({ acquire: { faa: 0, 'mystery-op': 2 }, release: { read: 4 } });
    const counts = accounting.counts;
    expect(counts).toEqual({ acquire: { cas: 2, faa: 0, 'masked-faa': 1, 'mystery-op': 2 }, release: { read: 5 }, cs: {} });
    expect(VerbAccounting.fromFlat(accounting.flat()).counts).toEqual(counts);
  });
});
