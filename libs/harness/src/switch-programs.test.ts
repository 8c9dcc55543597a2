import { ConfigError } from '@lockfabric/ports';
import { Switch } from '@lockfabric/switch';
import type { FissLockDecider } from '@lockfabric/switch';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { buildSwitchProgram, fissLockDeciderOptions } from './switch-programs.js';

const spec = (locks: number): WorkloadSpec => ({ clients: 2, locks, readRatio: 0.5, distribution: 'uniform', operations: 10, thinkNs: 0, criticalSectionNs: 0, seed: 3 });

function built(locks: number, options?: Record<string, string | number | boolean>): FissLockDecider {
  const program = buildSwitchProgram('fisslock', spec(locks), options) as FissLockDecider;
  new Switch(program);
  return program;
}

describe('buildSwitchProgram: the fisslock decider from the run options', () => {
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
    // (other keys are the clients' to check: the harness reads only the two the decider needs)
    expect(() => buildSwitchProgram('fisslock', spec(64), { policy: 'fair' })).toThrow(ConfigError);
    expect(() => buildSwitchProgram('fisslock', spec(64), { switchCapacity: 'many' })).toThrow(/switchCapacity must be an integer/);
    expect(() => buildSwitchProgram('fisslock', spec(64), { switchCapacity: -1 })).toThrow(ConfigError);
    expect(() => buildSwitchProgram('fisslock', spec(64), { switchCapacity: 1_680_001 })).toThrow(/switchCapacity 1680001 exceeds what the switch holds \(1680000 locks/);
  });

  it('builds forward and netlock as before', () => {
    expect(buildSwitchProgram('forward', spec(64)).name).toBe('forward');
    expect(() => buildSwitchProgram('netlock', spec(64))).toThrow(/built by its protocol's module/);
  });
});
