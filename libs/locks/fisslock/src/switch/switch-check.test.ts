import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { checkFissLockSwitch } from './switch-check.js';

const spec = 1_000;

function issuesOf(...args: Parameters<typeof checkFissLockSwitch>): readonly string[] {
  try {
    checkFissLockSwitch(...args);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
}

describe('checkFissLockSwitch', () => {
  it('accepts a switch at its defaults for clients at theirs, and a matching policy and split', () => {
    expect(issuesOf({ policy: 'read-preferring', lockCount: 1_680_000n }, spec)).toStrictEqual([]);
    expect(issuesOf({ policy: 'write-preferring', lockCount: 500n }, spec, { policy: 'write-preferring', switchCapacity: '500' })).toStrictEqual([]);
  });

  it('refuses a policy the clients do not follow', () => {
    expect(issuesOf({ policy: 'read-preferring', lockCount: 1_680_000n }, spec, { policy: 'write-preferring' })).toStrictEqual([
      "the switch's fisslock decider is read-preferring; the clients are write-preferring (give the switch --switch.policy=write-preferring, or the run --opt policy=read-preferring)",
    ]);
  });

  it('refuses a decider that keeps fewer locks than the clients send it', () => {
    expect(issuesOf({ policy: 'read-preferring', lockCount: 600n }, spec)).toStrictEqual([
      "the switch's fisslock decider keeps 600 locks; the clients send ids up to 999 to it (run with --opt switchCapacity=600, or start the switch with a larger --switch.lock-count)",
    ]);
    expect(issuesOf({ policy: 'read-preferring', lockCount: 600n }, spec, { switchCapacity: '600' })).toStrictEqual([]);
  });
});
