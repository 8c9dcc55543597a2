import { ConfigError } from '@lockfabric/ports';
import { SWITCH_PROGRAMS } from '@lockfabric/config';
import { Switch } from '@lockfabric/switch';
import type { FissLockDecider } from '@lockfabric/lock-catalog';
import { describe, expect, it } from 'vitest';
import { createSwitchProgram } from './switch-program.js';

describe('createSwitchProgram', () => {
  it('builds the forward program', () => {
    expect(createSwitchProgram('forward').name).toBe('forward');
  });

  it.each(['fisslock', 'netlock'])('builds the %s program every config may name', (name) => {
    expect(SWITCH_PROGRAMS).toContain(name);
    expect(createSwitchProgram(name).name).toBe(name);
  });

  it('builds the fisslock decider at full capacity by default, and with the settings given', () => {
    const full = createSwitchProgram('fisslock') as FissLockDecider;
    new Switch(full);
    expect([full.lockCount(), full.capacity(), full.policy]).toStrictEqual([1_680_000, 1_680_000, 'read-preferring']);
    const configured = createSwitchProgram('fisslock', { policy: 'write-preferring', lockCount: 1_000, fallbackNodes: [3] }) as FissLockDecider;
    const sw = new Switch(configured);
    expect([configured.lockCount(), configured.policy]).toStrictEqual([1_000, 'write-preferring']);
    expect(sw.tableEntries('fisslock.fallback-nodes').exact).toStrictEqual([[0, 3]]);
    // the write-preferring decider has its writer-waiting bit
    expect(sw.describe().arrays.map((a) => a.name)).toContain('fisslock.pref');
  });

  it('rejects a name no one knows, and settings for a program without them, as configuration errors', () => {
    expect(() => createSwitchProgram('bogus')).toThrow(ConfigError);
    expect(() => createSwitchProgram('bogus')).toThrow(/switch\.program: program bogus is not available/);
    expect(() => createSwitchProgram('netlock', { policy: 'write-preferring' })).toThrow(/switch\.policy: applies to the fisslock program only \(switch\.program is netlock\)/);
  });
});
