import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { assertValidWorkloadSpec, formatDistribution, opsBudgetFor, parseDistribution, validateWorkloadSpec } from './spec.js';
import type { WorkloadSpec } from './spec.js';

const valid: WorkloadSpec = {
  clients: 8,
  locks: 1000,
  readRatio: 0.5,
  distribution: { zipf: 0.99 },
  operations: 10_000,
  thinkNs: 0,
  criticalSectionNs: 500,
  seed: 42,
};

describe('parseDistribution', () => {
  it('reads uniform, zipf with and without θ, and scrambled zipf', () => {
    expect(parseDistribution('uniform')).toBe('uniform');
    expect(parseDistribution(' Uniform ')).toBe('uniform');
    expect(parseDistribution('zipf')).toEqual({ zipf: 0.99 });
    expect(parseDistribution('zipf:0.99')).toEqual({ zipf: 0.99 });
    expect(parseDistribution('zipf:1.5')).toEqual({ zipf: 1.5 });
    expect(parseDistribution('zipf:0')).toEqual({ zipf: 0 });
    expect(parseDistribution('zipf:0.9:scrambled')).toEqual({ zipf: 0.9, scrambled: true });
    expect(parseDistribution('scrambled-zipf:1.2')).toEqual({ zipf: 1.2, scrambled: true });
  });

  it('rejects anything else with a ConfigError that quotes the text', () => {
    for (const text of ['', 'zipfian', 'zipf:', 'zipf:abc', 'zipf:-1', 'zipf:Infinity', 'normal:3']) {
      expect(() => parseDistribution(text), text).toThrow(ConfigError);
    }
    expect(() => parseDistribution('zipf:-1')).toThrow(/zipf θ must be a number ≥ 0/);
  });

  it('formats back to text that parses to the same distribution', () => {
    for (const d of ['uniform', { zipf: 0.99 }, { zipf: 2, scrambled: true }] as const) expect(parseDistribution(formatDistribution(d))).toEqual(d);
  });
});

describe('validateWorkloadSpec', () => {
  it('accepts a valid spec', () => {
    expect(validateWorkloadSpec(valid)).toEqual([]);
    expect(validateWorkloadSpec({ ...valid, operations: undefined, durationMs: 100, distribution: 'uniform', timeoutMs: 5 })).toEqual([]);
    expect(() => assertValidWorkloadSpec(valid)).not.toThrow();
  });

  it('lists every problem in user words', () => {
    const bad = {
      clients: 0,
      locks: 2.5,
      readRatio: 1.5,
      distribution: { zipf: -1 },
      thinkNs: -1,
      criticalSectionNs: Number.NaN,
      seed: 0.5,
      timeoutMs: 0,
    } as WorkloadSpec;
    expect(validateWorkloadSpec(bad)).toEqual([
      'clients must be a whole number ≥ 1 (got 0)',
      'locks must be a whole number ≥ 1 (got 2.5)',
      'readRatio must be between 0 and 1 (got 1.5)',
      'distribution zipf θ must be a number ≥ 0 (got -1)',
      'give durationMs or operations (or both), or the run never ends',
      'thinkNs must be a number ≥ 0 (got -1)',
      'criticalSectionNs must be a number ≥ 0 (got NaN)',
      'seed must be a whole number (got 0.5)',
      'timeoutMs must be a number > 0 when given (got 0)',
    ]);
    expect(validateWorkloadSpec({ ...valid, distribution: 'zipf' as never })).toEqual(['distribution must be "uniform" or { zipf: θ } (got "zipf")']);
    expect(validateWorkloadSpec({ ...valid, operations: 0, durationMs: -5 })).toEqual([
      'durationMs must be a number > 0 when given (got -5)',
      'operations must be a whole number ≥ 1 when given (got 0)',
    ]);
    expect(() => assertValidWorkloadSpec({ ...valid, locks: 0 })).toThrow(/workload: locks must be a whole number ≥ 1/);
  });
});

describe('opsBudgetFor', () => {
  it('splits the total over clients, the first ones taking the remainder', () => {
    const spec = { clients: 3, operations: 10 };
    expect([0, 1, 2].map((i) => opsBudgetFor(spec, i))).toEqual([4, 3, 3]);
    expect(opsBudgetFor({ clients: 3, operations: undefined }, 1)).toBe(Number.POSITIVE_INFINITY);
    expect(() => opsBudgetFor(spec, 3)).toThrow(RangeError);
  });
});
