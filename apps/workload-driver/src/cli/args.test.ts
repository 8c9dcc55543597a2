import { describe, expect, it } from 'vitest';
import { WORKLOAD_FLAGS, parseCommandArgs, readWorkload, workloadFlags } from './args.js';

const defaults = { clients: 4, locks: 100, readRatio: 0, distribution: 'uniform', operations: 100 };

describe('--lock-ids', () => {
  it('sparse reaches the workload spec and its reproduction flags; dense (the default) leaves the spec as before', () => {
    const sparse = readWorkload(parseCommandArgs('bench', ['--lock-ids', 'sparse'], WORKLOAD_FLAGS), defaults);
    expect(sparse.reader.problems).toEqual([]);
    expect(sparse.spec.lockIds).toBe('sparse');
    expect(workloadFlags('fisslock', sparse.spec, {})).toContain('--lock-ids sparse');

    for (const argv of [[], ['--lock-ids', 'dense']]) {
      const dense = readWorkload(parseCommandArgs('bench', argv, WORKLOAD_FLAGS), defaults);
      expect(dense.reader.problems).toEqual([]);
      expect('lockIds' in dense.spec).toBe(false);
      expect(workloadFlags('fisslock', dense.spec, {}).some((f) => f.startsWith('--lock-ids'))).toBe(false);
    }
  });

  it('anything else is a problem naming the flag', () => {
    const bad = readWorkload(parseCommandArgs('bench', ['--lock-ids', 'hashed'], WORKLOAD_FLAGS), defaults);
    expect(bad.reader.problems).toEqual(['--lock-ids: lock ids "hashed" are not "dense" or "sparse"']);
  });
});
