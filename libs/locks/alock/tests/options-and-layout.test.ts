import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import {
  ALOCK_OPTION_HELP,
  ENTRY_BYTES,
  NULL_REF,
  REF_GENERATIONS,
  WAITING,
  alock,
  budgetOf,
  budgetWord,
  decodeRef,
  decodeTrace,
  encodeRef,
  encodeTrace,
  readAlockOptions,
  refGeneration,
  withRefGeneration,
} from '../src/index.js';

describe('alock options', () => {
  it('defaults: budgets 5/5, separate Peterson reads, no mutant', () => {
    expect(readAlockOptions()).toEqual({
      localBudget: 5,
      remoteBudget: 5,
      spinNs: 200,
      remoteSpinNs: 1_000,
      petersonRead: 'separate',
      sameNodeStores: false,
      releaseLinkTimeoutNs: 50_000_000,
      mutantUnboundedReleaseWait: false,
      mutantNoReadBack: false,
      mutantReuseAfterFailedSwap: false,
      mutantSkipAbortClear: false,
      mutantNaiveLocalCas: false,
      mutantSkipPeterson: false,
      mutantVictimFirst: false,
      mutantSkipReacquire: false,
      mutantPlainLocalRelease: false,
      mutantPollGate: false,
    });
    expect(Object.keys(ALOCK_OPTION_HELP).sort()).toEqual(Object.keys(readAlockOptions()).sort());
  });

  it('accepts strings from the command line', () => {
    expect(readAlockOptions({ localBudget: '2', remoteBudget: 7, petersonRead: 'combined', sameNodeStores: 'true' })).toMatchObject({
      localBudget: 2,
      remoteBudget: 7,
      petersonRead: 'combined',
      sameNodeStores: true,
    });
  });

  it('rejects every bad option at once with a ConfigError naming each', () => {
    let error: unknown;
    try {
      readAlockOptions({ localBudget: 0, remoteBudget: 1.5, petersonRead: 'both', budget: 3 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues.join('\n');
    for (const name of ['localBudget', 'remoteBudget', 'petersonRead', '"budget"']) expect(issues).toContain(name);
  });

  it('declares what the fabric must offer', () => {
    expect(alock).toMatchObject({ id: 'alock', fabric: 'verbs', capabilities: ['local-cpu-access'], entryBytes: ENTRY_BYTES, modes: ['exclusive'] });
    expect(64 % ENTRY_BYTES).toBe(0); // an entry never straddles a cache line
  });
});

describe('alock layout', () => {
  it('descriptor references are never null and round-trip', () => {
    for (const id of [
      { node: 0, client: 0, index: 0 },
      { node: 3, client: 4095, index: 1 },
      { node: 65_535, client: 2 ** 32 - 1, index: 1 },
      // 16 descriptors per client (a 2PL transaction's 16 locks) and the widest node and client
      { node: 2 ** 20 - 1, client: 2 ** 32 - 1, index: 15 },
    ]) {
      const ref = encodeRef(id);
      expect(ref).not.toBe(NULL_REF);
      expect(ref < 1n << 64n).toBe(true);
      expect(decodeRef(ref)).toEqual(id);
    }
    expect(() => encodeRef({ node: 0, client: 0, index: 16 })).toThrow(RangeError);
    expect(() => encodeRef({ node: 2 ** 20, client: 0, index: 0 })).toThrow(RangeError);
    // the link generation has its own bits: it never bleeds into the index or the client
    const top = withRefGeneration(encodeRef({ node: 7, client: 2 ** 32 - 1, index: 15 }), REF_GENERATIONS - 1);
    expect(refGeneration(top)).toBe(REF_GENERATIONS - 1);
    expect(decodeRef(top)).toEqual({ node: 7, client: 2 ** 32 - 1, index: 15 });
    expect(() => decodeRef(NULL_REF)).toThrow(RangeError);
  });

  it('a zeroed budget word means waiting; budgets are stored plus one', () => {
    expect(WAITING).toBe(0n);
    expect(budgetWord(0)).toBe(1n);
    expect(budgetOf(budgetWord(4))).toBe(4);
    expect(() => budgetOf(WAITING)).toThrow(RangeError);
    expect(() => budgetWord(-1)).toThrow(RangeError);
  });

  it('a hand-over trace context round-trips for its descriptor only', () => {
    const context = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
    const words = encodeTrace(context, 1)!;
    expect(decodeTrace(words, 1)).toEqual(context);
    expect(decodeTrace(words, 0)).toBeUndefined();
    expect(decodeTrace([0n, 0n, 0n, 0n], 0)).toBeUndefined();
    expect(encodeTrace({ ...context, traceId: 'not-hex' }, 0)).toBeUndefined();
  });
});
