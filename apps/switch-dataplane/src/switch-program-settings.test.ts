import { FISSLOCK_POLICIES as CONFIG_POLICIES, MAX_SWITCH_MACHINE_ID, loadConfig } from '@lockfabric/config';
import { ConfigError } from '@lockfabric/ports';
import { FISSLOCK_POLICIES, MAX_MACHINE_ID } from '@lockfabric/lock-catalog';
import { describe, expect, it } from 'vitest';
import { SWITCH_LOCK_CAPACITY, checkSettingsApply, programSettingsOf } from './switch-program-settings.js';

function settingsFor(argv: string[], env: Record<string, string> = {}) {
  return programSettingsOf(loadConfig({ role: 'switch', argv, env }).switch);
}

function problems(argv: string[]): readonly string[] {
  try {
    settingsFor(argv);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error(`accepted ${argv.join(' ')}`);
}

describe('programSettingsOf', () => {
  it('turns the config keys into decider settings (flags over environment)', () => {
    const read = settingsFor(['--switch.program', 'fisslock', '--switch.policy=write-preferring', '--switch.lock-count', '1000000'], {
      LOCKFABRIC_SWITCH_POLICY: 'starvation-prevention',
      LOCKFABRIC_SWITCH_FALLBACK_NODES: '3, 4',
    });
    expect(read.settings).toStrictEqual({ policy: 'write-preferring', lockCount: 1_000_000, fallbackNodes: [3, 4] });
    expect(read.described).toStrictEqual(['switch.policy = write-preferring', 'switch.lockCount = 1000000', 'switch.fallbackNodes = 3,4']);
  });

  it('gives no settings when none is set', () => {
    expect(settingsFor(['--switch.program=forward'])).toStrictEqual({ settings: {}, described: [] });
  });

  it('accepts the full capacity and no more', () => {
    expect(settingsFor(['--switch.program=fisslock', `--switch.lock-count=${SWITCH_LOCK_CAPACITY}`]).settings.lockCount).toBe(1_680_000);
    expect(problems(['--switch.program=fisslock', `--switch.lock-count=${SWITCH_LOCK_CAPACITY + 1}`])).toStrictEqual([
      'switch.lockCount: at most 1680000 locks fit the switch (MAU formula, 12 MAUs of 560000 bytes), got 1680001',
    ]);
  });

  it('rejects fisslock settings for another program, every key at once', () => {
    const issuesOf = (program: string, argv: string[]): readonly string[] => {
      try {
        checkSettingsApply(program, settingsFor(argv).settings);
        return [];
      } catch (error) {
        if (error instanceof ConfigError) return error.issues;
        throw error;
      }
    };
    expect(issuesOf('netlock', ['--switch.lock-count=5', '--switch.fallback-nodes=1'])).toStrictEqual([
      'switch.lockCount: applies to the fisslock program only (switch.program is netlock)',
      'switch.fallbackNodes: applies to the fisslock program only (switch.program is netlock)',
    ]);
    expect(issuesOf('forward', ['--switch.policy=read-preferring'])).toStrictEqual(['switch.policy: applies to the fisslock program only (switch.program is forward)']);
    expect(issuesOf('fisslock', ['--switch.policy=read-preferring', '--switch.lock-count=5'])).toStrictEqual([]);
    expect(issuesOf('netlock', [])).toStrictEqual([]);
  });

  it("the config's policy list and machine-id bound are the switch model's", () => {
    expect([...CONFIG_POLICIES]).toStrictEqual([...FISSLOCK_POLICIES]);
    expect(MAX_SWITCH_MACHINE_ID).toBe(MAX_MACHINE_ID);
  });
});
