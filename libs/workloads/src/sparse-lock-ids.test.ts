import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { TestRandom } from '../tests/support/seeded-random.js';
import { createKeyChooser } from './key-chooser.js';
import { SPARSE_LOCK_ID_SPACE, sparseLockId } from './scramble.js';
import { parseLockIdSpace, validateWorkloadSpec } from './spec.js';
import type { WorkloadSpec } from './spec.js';
import { runSpecFromWire, runSpecToWire } from './wire-form.js';

const spec: WorkloadSpec = { clients: 2, locks: 100, readRatio: 0, distribution: 'uniform', operations: 10, thinkNs: 0, criticalSectionNs: 0, seed: 7 };

describe('sparse lock ids', () => {
  it('sparseLockId is injective, stays below 2^32, and spreads neighbouring indexes far apart', () => {
    const ids = Array.from({ length: 50_000 }, (_, i) => sparseLockId(i));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !Number.isInteger(id) || id < 0 || id >= SPARSE_LOCK_ID_SPACE)).toEqual([]);
    // far from the dense range: almost every id of the first 50 000 indexes lies above 50 000
    expect(ids.filter((id) => id < 50_000).length).toBeLessThan(10);
    // fixed: the same index always gives the same id (every process of a run agrees)
    expect(sparseLockId(12_345)).toBe(ids[12_345]);
    expect(sparseLockId(SPARSE_LOCK_ID_SPACE - 1)).toBeLessThan(SPARSE_LOCK_ID_SPACE);
    expect(() => sparseLockId(SPARSE_LOCK_ID_SPACE)).toThrow(RangeError);
    expect(() => sparseLockId(-1)).toThrow(RangeError);
  });

  it('a sparse workload draws exactly the sparse images of the dense draws; dense stays the default', () => {
    const dense = createKeyChooser(spec, new TestRandom(3));
    const sparse = createKeyChooser({ ...spec, lockIds: 'sparse' }, new TestRandom(3));
    const explicitDense = createKeyChooser({ ...spec, lockIds: 'dense' }, new TestRandom(3));
    for (let i = 0; i < 1_000; i++) {
      const index = dense.next();
      expect(index).toBeLessThan(spec.locks);
      expect(explicitDense.next()).toBe(index);
      expect(sparse.next()).toBe(sparseLockId(index));
    }
  });

  it('the spec option is validated, parsed and carried over the wire (dense runs keep their old wire form)', () => {
    expect(validateWorkloadSpec({ ...spec, lockIds: 'sparse' })).toEqual([]);
    expect(validateWorkloadSpec({ ...spec, lockIds: 'random' as never })).toEqual(['lockIds must be "dense" or "sparse" (got "random")']);
    expect(parseLockIdSpace(' Sparse ')).toBe('sparse');
    expect(() => parseLockIdSpace('hashed')).toThrow(ConfigError);

    const sparseWire = runSpecToWire({ protocol: 'fisslock', workload: { ...spec, lockIds: 'sparse' }, options: { lockIds: 'mapped' } });
    expect(sparseWire.lockIds).toBe('sparse');
    expect(runSpecFromWire(sparseWire).workload.lockIds).toBe('sparse');
    const denseWire = runSpecToWire({ protocol: 'fisslock', workload: spec, options: {} });
    expect(denseWire.lockIds).toBe('');
    expect(runSpecFromWire(denseWire).workload).toEqual(spec);
    expect(runSpecFromWire({ ...denseWire, lockIds: 'dense' }).workload).toEqual(spec);
    expect(() => runSpecFromWire({ ...denseWire, lockIds: 'random' })).toThrow(/lockIds must be "dense" or "sparse"/);
  });
});
