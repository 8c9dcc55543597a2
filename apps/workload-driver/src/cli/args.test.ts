import { describe, expect, it } from 'vitest';
import { FlagReader, WORKLOAD_FLAGS, parseCommandArgs, readWorkload, workloadFlags } from './args.js';

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

describe('--racks', () => {
  it('becomes the protocol option racks (what reproduction lines carry); 1 adds nothing', () => {
    const two = readWorkload(parseCommandArgs('bench', ['--racks', '2'], WORKLOAD_FLAGS), defaults);
    expect(two.reader.problems).toEqual([]);
    expect(two.protocolOptions).toEqual({ racks: '2' });
    expect(workloadFlags('fisslock', two.spec, two.protocolOptions)).toContain('--opt racks=2');
    expect(readWorkload(parseCommandArgs('bench', ['--racks', '1'], WORKLOAD_FLAGS), defaults).protocolOptions).toEqual({});
  });

  it('a bad count, or one that disagrees with --opt racks, is a problem naming the flag', () => {
    expect(readWorkload(parseCommandArgs('bench', ['--racks', '0'], WORKLOAD_FLAGS), defaults).reader.problems).toEqual(['--racks: expected an integer ≥ 1, got "0"']);
    expect(readWorkload(parseCommandArgs('bench', ['--racks', '2', '--opt', 'racks=3'], WORKLOAD_FLAGS), defaults).reader.problems).toEqual(['--racks 2 and --opt racks=3 disagree; give one']);
  });
});

describe('FlagReader.portList', () => {
  it('reads one port or a list, falls back when absent, and names a bad entry', () => {
    const read = (value: string | undefined) => {
      const reader = new FlagReader(value === undefined ? {} : { 'compute-memory-port': value });
      return { ports: reader.portList('compute-memory-port', [50055]), problems: reader.problems };
    };
    expect(read(undefined)).toEqual({ ports: [50055], problems: [] });
    expect(read('4100')).toEqual({ ports: [4100], problems: [] });
    expect(read('4100, 4101,4102')).toEqual({ ports: [4100, 4101, 4102], problems: [] });
    for (const bad of ['', '4100,', '0', '70000', '41.5', 'x']) expect(read(bad).problems, bad).toEqual([expect.stringContaining('--compute-memory-port: expected a port')]);
  });
});
