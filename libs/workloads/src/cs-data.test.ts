import type { LockTableLayout } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { CS_DATA_REGION_BYTES, csObjectAddress } from './cs-data.js';
import { validateWorkloadSpec } from './spec.js';
import type { WorkloadSpec } from './spec.js';
import { CS_VERBS_WIRE_OPTION, runSpecFromWire, runSpecToWire } from './wire-form.js';

const layout: LockTableLayout = { memoryNodes: [{ node: 0, region: 0, rkey: 1, baseOffset: 0 }, { node: 1, region: 0, rkey: 2, baseOffset: 0 }], entryBytes: 8, lockCount: 1_000 };
const regions = [{ node: 0, region: 2, rkey: 7 }, { node: 1, region: 2, rkey: 8 }];
const spec: WorkloadSpec = { clients: 2, locks: 1_000, readRatio: 0.5, distribution: 'uniform', operations: 10, thinkNs: 0, criticalSectionNs: 0, seed: 1 };

describe('critical-section data verbs', () => {
  it("put a lock's object on the lock's own memory node, inside the bounded region", () => {
    const data = { verbs: 1, bytes: 64, regions };
    expect(csObjectAddress(data, layout, 6)).toEqual({ node: 0, region: 2, rkey: 7, offset: 3 * 64 });
    expect(csObjectAddress(data, layout, 7)).toEqual({ node: 1, region: 2, rkey: 8, offset: 3 * 64 });
    const far = csObjectAddress(data, layout, 2 * (CS_DATA_REGION_BYTES / 64) + 4);
    expect(far.offset).toBe(2 * 64);
  });

  it('are validated with the spec, and travel to live compute nodes in a reserved option the protocol never sees', () => {
    expect(validateWorkloadSpec({ ...spec, csVerbs: -1, csVerbBytes: 0 })).toHaveLength(2);
    expect(validateWorkloadSpec({ ...spec, csVerbs: 2, csVerbBytes: 64 })).toEqual([]);
    const wire = runSpecToWire({ protocol: 'caslock', workload: { ...spec, csVerbs: 3, csVerbBytes: 128 }, options: { backoff: 'true' } });
    expect(wire.options[CS_VERBS_WIRE_OPTION]).toBe('3x128');
    const back = runSpecFromWire(wire);
    expect([back.workload.csVerbs, back.workload.csVerbBytes, back.options]).toEqual([3, 128, { backoff: 'true' }]);
    expect(runSpecFromWire(runSpecToWire({ protocol: 'caslock', workload: { ...spec, csVerbs: 1 }, options: {} })).workload.csVerbBytes).toBe(64);
    expect(runSpecToWire({ protocol: 'caslock', workload: spec, options: {} }).options).toEqual({});
    // a bad size is the spec's problem, listed like any other
    expect(() => runSpecFromWire({ ...wire, options: { [CS_VERBS_WIRE_OPTION]: '1x0' } })).toThrow(/csVerbBytes/);
    expect(() => runSpecFromWire({ ...wire, options: { [CS_VERBS_WIRE_OPTION]: 'many' } })).toThrow(/expected <verbs>x<bytes>/);
  });
});
