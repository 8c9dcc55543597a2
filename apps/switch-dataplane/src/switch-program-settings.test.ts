import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { SWITCH_LOCK_CAPACITY, checkSettingsApply, readSwitchProgramSettings } from './switch-program-settings.js';

function problems(argv: string[], env: Record<string, string> = {}): readonly string[] {
  try {
    readSwitchProgramSettings(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error(`accepted ${argv.join(' ')} ${JSON.stringify(env)}`);
}

describe('readSwitchProgramSettings', () => {
  it('reads flags (both spellings) and environment, flags over environment, and leaves the rest for loadConfig', () => {
    const split = readSwitchProgramSettings(
      ['--switch.program', 'fisslock', '--switch.policy=write-preferring', '--switch.lock-count', '1000000', '--nats.url=nats://x:4222'],
      { LOCKFABRIC_SWITCH_POLICY: 'starvation-prevention', LOCKFABRIC_SWITCH_FALLBACK_NODES: '3, 4', LOCKFABRIC_SWITCH_RACK: '1', OTEL_SDK_DISABLED: 'true' },
    );
    expect(split.settings).toStrictEqual({ policy: 'write-preferring', lockCount: 1_000_000, fallbackNodes: [3, 4] });
    expect(split.argv).toStrictEqual(['--switch.program', 'fisslock', '--nats.url=nats://x:4222']);
    expect(split.env).toStrictEqual({ LOCKFABRIC_SWITCH_RACK: '1', OTEL_SDK_DISABLED: 'true' });
    expect(split.described).toStrictEqual([
      'switch.policy = write-preferring (--switch.policy)',
      'switch.lockCount = 1000000 (--switch.lock-count)',
      'switch.fallbackNodes = 3, 4 (LOCKFABRIC_SWITCH_FALLBACK_NODES)',
    ]);
  });

  it('gives no settings when none is set; an empty variable counts as unset', () => {
    expect(readSwitchProgramSettings(['--switch.program=forward'], { LOCKFABRIC_SWITCH_POLICY: ' ' })).toMatchObject({ settings: {}, argv: ['--switch.program=forward'], env: {}, described: [] });
  });

  it('accepts the full capacity and no more', () => {
    expect(readSwitchProgramSettings([`--switch.lock-count=${SWITCH_LOCK_CAPACITY}`], {}).settings.lockCount).toBe(1_680_000);
    expect(problems([`--switch.lock-count=${SWITCH_LOCK_CAPACITY + 1}`])).toStrictEqual([
      'switch.lockCount from --switch.lock-count: at most 1680000 locks fit the switch (MAU formula, 12 MAUs of 560000 bytes), got 1680001',
    ]);
  });

  it('rejects bad values, naming key and source, all at once', () => {
    const all = problems(['--switch.policy', 'fair', '--switch.fallback-nodes=1,x'], { LOCKFABRIC_SWITCH_LOCK_COUNT: '1e6' });
    expect(all).toStrictEqual([
      "switch.policy from --switch.policy: expected one of read-preferring, starvation-prevention, write-preferring, got 'fair'",
      "switch.lockCount from LOCKFABRIC_SWITCH_LOCK_COUNT: expected a positive integer, got '1e6'",
      "switch.fallbackNodes from --switch.fallback-nodes: expected a comma-separated list of machine ids in [0, 254], got '1,x'",
    ]);
    expect(problems(['--switch.lock-count=0'])[0]).toContain("expected a positive integer, got '0'");
    expect(problems(['--switch.lock-count=-5'])[0]).toContain("expected a positive integer, got '-5'");
    expect(problems(['--switch.fallback-nodes=255'])[0]).toContain('machine ids in [0, 254]');
    expect(problems(['--switch.fallback-nodes=1,,2'])[0]).toContain("got '1,,2'");
  });

  it('a flag without its value is an error, and the next flag is left alone', () => {
    expect(problems(['--switch.policy'])).toStrictEqual(['--switch.policy: expects a value']);
    expect(() => readSwitchProgramSettings(['--switch.lock-count', '--switch.program=fisslock'], {})).toThrow(/--switch.lock-count: expects a value/);
  });
});

describe('checkSettingsApply', () => {
  it('accepts fisslock settings for fisslock only', () => {
    expect(() => checkSettingsApply('fisslock', { policy: 'write-preferring', lockCount: 5 })).not.toThrow();
    expect(() => checkSettingsApply('netlock', {})).not.toThrow();
    expect(() => checkSettingsApply('netlock', { lockCount: 5, fallbackNodes: [1] })).toThrow(ConfigError);
    expect(() => checkSettingsApply('forward', { policy: 'read-preferring' })).toThrow('switch.policy: applies to the fisslock program only (switch.program is forward)');
  });
});
