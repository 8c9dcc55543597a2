import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { SHIFTLOCK_OPTION_HELP, readShiftLockOptions, shiftlock } from '../src/index.js';

describe('shiftlock options', () => {
  it('defaults follow the spec: N = 16, T_lease = 10 ms, δ = 1e-4, ~2 µs polls, K = 16, server recovery, one era', () => {
    expect(readShiftLockOptions()).toEqual({
      consecutiveWriters: 16,
      leaseNs: 10_000_000,
      clockDrift: 1e-4,
      pollIntervalNs: 2_000,
      endpoints: 16,
      recovery: 'server',
      recoveryClient: 4095,
      eraBuckets: 1,
      handoverBumpsRelCnt: true,
      hardenedTransfer: true,
      trivialCas: false,
      sameNodeDelayNs: 0,
      paperLiteralEpoch: false,
      mutantEpochBeforeLeap: false,
      mutantSkipReaderWait: false,
      mutantStaleGrants: false,
    });
  });

  it('accepts N = ∞ (as "inf" from the command line) and strings for numbers and booleans', () => {
    expect(readShiftLockOptions({ consecutiveWriters: 'inf' }).consecutiveWriters).toBe(Infinity);
    expect(readShiftLockOptions({ consecutiveWriters: '4', trivialCas: 'true' })).toMatchObject({ consecutiveWriters: 4, trivialCas: true });
  });

  it('names every bad or unknown option in one ConfigError', () => {
    try {
      readShiftLockOptions({ consecutiveWriters: 0, endpoints: 17, recovery: 'maybe', eraBuckets: 9, nonsense: 1 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const issues = (error as ConfigError).issues.join('\n');
      for (const name of ['consecutiveWriters', 'endpoints', 'recovery', 'eraBuckets', 'nonsense']) expect(issues).toContain(name);
    }
  });

  it("refuses the artifact's no-bump handover while failure detection is on (A2), and allows it with recovery off", () => {
    expect(() => readShiftLockOptions({ handoverBumpsRelCnt: false })).toThrow(ConfigError);
    expect(readShiftLockOptions({ handoverBumpsRelCnt: false, recovery: 'off' }).handoverBumpsRelCnt).toBe(false);
  });

  it('the protocol definition declares the 16-byte entry, both modes and the NIC capabilities it needs', () => {
    expect(shiftlock).toMatchObject({ id: 'shiftlock', fabric: 'verbs', entryBytes: 16, modes: ['shared', 'exclusive'], capabilities: ['masked-atomics', 'send'] });
    expect(Object.keys(shiftlock.options).sort()).toEqual(Object.keys(SHIFTLOCK_OPTION_HELP).sort());
    const parsedAsOptions = Object.keys(readShiftLockOptions());
    expect(parsedAsOptions.sort()).toEqual(Object.keys(SHIFTLOCK_OPTION_HELP).sort());
    expect(readShiftLockOptions({ leaseNs: '500000' }).leaseNs).toBe(500_000);
  });
});
