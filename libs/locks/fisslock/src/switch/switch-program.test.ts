import { ConfigError } from '@lockfabric/ports';
import { Switch } from '@lockfabric/switch';
import { describe, expect, it } from 'vitest';
import { fisslock } from '../protocol.js';
import type { FissLockDecider } from './decider.js';
import { buildFissLockSwitchProgram, fissLockDeciderOptions } from './switch-program.js';

const spec = (locks: number): number => locks;
const buildSwitchProgram = (_name: 'fisslock', workloadLocks: number, options: Record<string, string | number | boolean> = {}) =>
  buildFissLockSwitchProgram({ options, workloadLocks, sampleLockTrace: () => [] });

function built(locks: number, options?: Record<string, string | number | boolean>): FissLockDecider {
  const program = buildSwitchProgram('fisslock', spec(locks), options);
  new Switch(program);
  return program;
}

describe('buildSwitchProgram: the fisslock decider from the run options', () => {
  it('is what the protocol definition hands substrates', () => {
    expect(fisslock.buildSwitchProgram).toBe(buildFissLockSwitchProgram);
  });

  it('defaults: read-preferring, every lock of the workload (at least 1 024), at most the capacity', () => {
    expect(fissLockDeciderOptions(spec(64))).toStrictEqual({ policy: 'read-preferring', lockCount: 1_024 });
    expect(built(5_000).lockCount()).toBe(5_000);
    expect(built(3_000_000).lockCount()).toBe(1_680_000);
  });

  it('takes the clients\' policy, so a write-preferring run gets the writer-waiting bit', () => {
    const program = built(64, { policy: 'write-preferring' });
    expect(program.policy).toBe('write-preferring');
    expect(fissLockDeciderOptions(spec(64), { policy: 'starvation-prevention' }).policy).toBe('starvation-prevention');
  });

  it('takes the clients\' switchCapacity as its lock count, so both split the ids at the same place', () => {
    expect(built(64, { switchCapacity: 16 }).lockCount()).toBe(16);
    expect(built(5_000, { switchCapacity: 4_000 }).lockCount()).toBe(4_000);
  });

  it('refuses a policy or switchCapacity the clients would refuse, and a switchCapacity the switch cannot hold', () => {
    // (other keys are the clients' to check: the decider reads only the two it needs)
    expect(() => buildSwitchProgram('fisslock', spec(64), { policy: 'fair' })).toThrow(ConfigError);
    expect(() => buildSwitchProgram('fisslock', spec(64), { switchCapacity: 'many' })).toThrow(/switchCapacity must be an integer/);
    expect(() => buildSwitchProgram('fisslock', spec(64), { switchCapacity: -1 })).toThrow(ConfigError);
    expect(() => buildSwitchProgram('fisslock', spec(64), { switchCapacity: 1_680_001 })).toThrow(/switchCapacity 1680001 exceeds what the switch holds \(1680000 locks/);
  });
});
