import { describe, expect, it } from 'vitest';
import { COST_MODELS, IDEAL_COST_MODEL, PAPER_COST_MODEL, parseCostModel, withOverrides } from './cost-model.js';
import { DEFAULT_NIC_TIMING, validateNicTimingModel } from './nic-timing.js';

describe('cost models', () => {
  it('ideal is the NIC and network LockFabric had before the model: no ceilings, jittered links, free lock managers', () => {
    expect(IDEAL_COST_MODEL.nic).toEqual(DEFAULT_NIC_TIMING);
    expect(IDEAL_COST_MODEL).toMatchObject({ verbLatencyNs: 1_000, messageLatencyNs: 1_500, switchLinks: 'jittered' });
    expect(IDEAL_COST_MODEL.lockManagerPacketNs).toBeUndefined();
  });

  it('paper has both inbound ceilings, atomics the dearer, and valid NIC timing', () => {
    validateNicTimingModel(PAPER_COST_MODEL.nic);
    expect(PAPER_COST_MODEL.nic.atomicIops).toBeLessThan(PAPER_COST_MODEL.nic.readWriteIops!);
    expect(PAPER_COST_MODEL.nic.maskedAtomic16Ns).toBeGreaterThan(PAPER_COST_MODEL.nic.maskedAtomic8Ns);
    expect(Object.keys(COST_MODELS)).toEqual(['paper', 'ideal']);
  });

  it('a model file overrides fields of paper, and null turns a ceiling or the lock-manager CPU off', () => {
    const { model, problems } = parseCostModel({ name: 'cx6', nic: { atomicIops: 20e6, readWriteIops: null }, messageLatencyNs: 3_000, lockManagerPacketNs: null });
    expect(problems).toEqual([]);
    expect(model).toMatchObject({ name: 'cx6', messageLatencyNs: 3_000, verbLatencyNs: PAPER_COST_MODEL.verbLatencyNs, nic: { atomicIops: 20e6, casNs: PAPER_COST_MODEL.nic.casNs } });
    expect(model!.nic.readWriteIops).toBeUndefined();
    expect(model!.lockManagerPacketNs).toBeUndefined();
  });

  it('lists every problem of a bad file, never throws', () => {
    const { model, problems } = parseCostModel({ nic: { casNs: -1, atomicIops: 0, warp: 1, headOfLineBlocking: 'yes' }, switchLinks: 'udp', lockManagerCores: 0, verbLatencyNs: 'fast', extra: true });
    expect(model).toBeUndefined();
    expect(problems).toHaveLength(8);
    for (const field of ['casNs', 'atomicIops', 'warp', 'headOfLineBlocking', 'switchLinks', 'lockManagerCores', 'verbLatencyNs', 'extra']) expect(problems.some((p) => p.includes(field))).toBe(true);
    expect(parseCostModel([]).problems).toEqual(['a cost model is a JSON object']);
  });

  it('--mn-iops sets the READ/WRITE ceiling with atomics at the model\'s share, and names itself', () => {
    const m = withOverrides(PAPER_COST_MODEL, { mnIops: 4e6, cnLatencyNs: 5_000 });
    expect(m.nic).toMatchObject({ readWriteIops: 4e6, atomicIops: 2e6 });
    expect(m.messageLatencyNs).toBe(5_000);
    expect(m.name).toBe('paper+mn-iops=4000000+cn-latency-ns=5000');
    expect(withOverrides(IDEAL_COST_MODEL, { mnIops: 1e6 }).nic).toMatchObject({ readWriteIops: 1e6, atomicIops: 1e6 });
  });
});
