import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { parseFaultSpec } from '../src/index.js';

function issues(input: unknown): readonly string[] {
  try {
    parseFaultSpec(input);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('the spec was accepted');
}

describe('parseFaultSpec', () => {
  it('accepts a complete spec and returns it unchanged', () => {
    const spec = {
      rules: [
        { loss: 0.01 },
        { packetTypes: ['grant', 'free'], machines: [2, 3], duplicate: 0.5, delay: 1, delayNsMin: 100, delayNsMax: 2000 },
        { reorder: 0.2, reorderNsMax: 5000 },
        { packetTypes: ['ack'], loss: 0, duplicate: 1 },
        { direction: 'ingress', packetTypes: ['acquire'], loss: 1 },
        { direction: 'both', machines: [4], delay: 0.5, delayNsMax: 100 },
        { direction: 'egress', duplicate: 0.1 },
      ],
    };
    expect(parseFaultSpec(spec)).toBe(spec);
    expect(parseFaultSpec({ rules: [] })).toEqual({ rules: [] });
  });

  it('rejects probabilities outside [0, 1], naming the path', () => {
    expect(issues({ rules: [{ loss: 1.5 }] })).toEqual(['faults.rules[0].loss: probability must be a number in [0, 1], got 1.5']);
    expect(issues({ rules: [{ duplicate: -0.1 }] })[0]).toMatch(/rules\[0\]\.duplicate: probability .* got -0.1/);
    expect(issues({ rules: [{ loss: Number.NaN }] })[0]).toContain('got NaN');
    expect(issues({ rules: [{ loss: '0.1' }] })[0]).toContain('got "0.1"');
  });

  it('rejects unknown keys, packet types and machine ids', () => {
    expect(issues({ rules: [{ los: 0.1, loss: 0.1 }] })).toEqual([expect.stringContaining('faults.rules[0].los: unknown key')]);
    expect(issues({ rules: [], extra: 1 })).toEqual(['faults.extra: unknown key (expected only "rules")']);
    expect(issues({ rules: [{ packetTypes: ['grant', 'gránt'], loss: 1 }] })[0]).toContain('faults.rules[0].packetTypes[1]: unknown packet type "gránt"');
    expect(issues({ rules: [{ packetTypes: [], loss: 1 }] })[0]).toContain('non-empty array');
    expect(issues({ rules: [{ machines: [1, -2, 1.5], loss: 1 }] })).toHaveLength(2);
  });

  it('requires durations exactly when their probability is set, min ≤ max', () => {
    expect(issues({ rules: [{ delay: 0.5 }] })).toEqual(['faults.rules[0].delayNsMax: required and above 0 when delay > 0']);
    expect(issues({ rules: [{ reorder: 0.5, reorderNsMax: 0 }] })[0]).toContain('reorderNsMax: required and above 0');
    expect(issues({ rules: [{ loss: 0.1, reorderNsMax: 10 }] })[0]).toContain('reorderNsMax: given but reorder is not above 0');
    expect(issues({ rules: [{ delay: 1, delayNsMin: 10, delayNsMax: 5 }] })[0]).toContain('delayNsMin: 10 exceeds delayNsMax 5');
    expect(issues({ rules: [{ delay: 1, delayNsMax: -5 }] })[0]).toContain('must be a non-negative number of ns');
  });

  it('rejects a direction other than egress, ingress or both', () => {
    expect(issues({ rules: [{ direction: 'in', loss: 1 }] })).toEqual(['faults.rules[0].direction: must be one of egress, ingress, both (omit it for egress), got "in"']);
    expect(issues({ rules: [{ direction: 1, loss: 1 }] })[0]).toContain('direction: must be one of');
  });

  it('rejects rules without effect and non-objects', () => {
    expect(issues({ rules: [{ packetTypes: ['grant'] }] })[0]).toContain('faults.rules[0]: has no effect');
    expect(issues(null)[0]).toContain('faults: must be an object');
    expect(issues({ rules: {} })[0]).toContain('faults.rules: must be an array');
    expect(issues({ rules: [3] })[0]).toContain('faults.rules[0]: must be an object, got 3');
  });

  it('lists every problem at once', () => {
    const all = issues({ rules: [{ loss: 2 }, { duplicate: 2, machines: 'all' }] });
    expect(all).toHaveLength(3);
    expect(() => parseFaultSpec({ rules: [{ loss: 2 }] })).toThrow(/invalid configuration:\n {2}- faults\.rules\[0\]\.loss/);
  });
});
