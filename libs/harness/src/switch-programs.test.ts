import { forwardProgram } from '@lockfabric/switch';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { buildSwitchProgram } from './switch-programs.js';

const spec: WorkloadSpec = { clients: 2, locks: 64, readRatio: 0.5, distribution: 'uniform', operations: 10, thinkNs: 0, criticalSectionNs: 0, seed: 3 };

describe('buildSwitchProgram', () => {
  it('builds forward itself and hands a protocol\'s own program its options and the workload\'s lock count', () => {
    expect(buildSwitchProgram('forward', spec).name).toBe('forward');
    const seen: unknown[] = [];
    const program = buildSwitchProgram('fisslock', spec, { policy: 'write-preferring' }, (input) => {
      seen.push(input.options, input.workloadLocks, input.sampleLockTrace(3).length);
      return forwardProgram();
    });
    expect(program.name).toBe('forward');
    expect(seen).toEqual([{ policy: 'write-preferring' }, 64, 3]);
  });

  it('refuses a module-built program without its builder', () => {
    expect(() => buildSwitchProgram('netlock', spec)).toThrow(/built by its protocol's module/);
    expect(() => buildSwitchProgram('fisslock', spec)).toThrow(/built by its protocol's module/);
  });
});
