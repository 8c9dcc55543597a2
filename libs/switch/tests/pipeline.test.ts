import { describe, expect, it } from 'vitest';
import { DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS, Pipeline, RegisterAccessError, Switch, SwitchProgramError } from '../src/index.js';
import type { SwitchProgram } from '../src/index.js';

const C = DEFAULT_MAU_CAPACITY_BITS;

function programError(run: () => unknown): SwitchProgramError {
  try {
    run();
  } catch (error) {
    if (error instanceof SwitchProgramError) return error;
    throw error;
  }
  throw new Error('expected a SwitchProgramError');
}

/** FissLock's 18-bit per-lock layout (spec §6.2) over `locks`, with `mid`/`inca` split across stages. */
function fissLockLayout(locks: number, midStages: number[], incaStages: number[]): SwitchProgram {
  return {
    name: 'layout',
    build(pipeline) {
      pipeline.addArray({ name: 'free', width: 1, length: locks, stage: 4, initial: 1 });
      pipeline.addArray({ name: 'rw', width: 1, length: locks, stage: 5 });
      pipeline.addSplitArray({ name: 'inca', width: 8, length: locks, stages: incaStages });
      pipeline.addSplitArray({ name: 'mid', width: 8, length: locks, stages: midStages });
    },
    process: () => [],
  };
}

describe('Mau and Pipeline capacity', () => {
  it('defaults to 12 ingress MAUs of 560 000 bytes each (mau_bytes of the FissLock spec)', () => {
    const pipeline = new Pipeline();
    expect(DEFAULT_INGRESS_STAGES).toBe(12);
    expect(C).toBe(4_480_000);
    expect(pipeline.stageCount).toBe(12);
    expect(pipeline.capacityBits()).toBe(12 * 4_480_000);
  });

  it('counts 1 000 000 elements × 1 bit as exactly 1 000 000 bits', () => {
    const pipeline = new Pipeline();
    pipeline.addArray({ name: 'free', width: 1, length: 1_000_000, stage: 0 });
    expect(pipeline.mau(0).usedBits).toBe(1_000_000);
    expect(pipeline.mau(0).freeBits).toBe(C - 1_000_000);
    expect(pipeline.registerBits()).toBe(1_000_000);
    expect(pipeline.registerBytes()).toBe(125_000);
  });

  it('fits arrays that exactly fill a MAU and refuses one more bit, with exact numbers', () => {
    const pipeline = new Pipeline();
    pipeline.addArray({ name: 'mid', width: 8, length: C / 8 - 1000, stage: 2 });
    pipeline.addArray({ name: 'tail', width: 1, length: 8000, stage: 2 });
    expect(pipeline.mau(2).freeBits).toBe(0);
    const error = programError(() => pipeline.addArray({ name: 'one-more', width: 1, length: 1, stage: 2 }));
    expect(error.kind).toBe('capacity');
    expect(error.message).toBe(
      "stage 2: register array 'one-more' needs 1 bits (1 bits × 1) but only 0 of 4480000 bits are free (4480000 used); short by 1 bits",
    );
    expect(pipeline.mau(2).arrays.map((a) => a.name)).toEqual(['mid', 'tail']);
  });

  it('refuses a single array one bit larger than a MAU', () => {
    const pipeline = new Pipeline();
    pipeline.addArray({ name: 'exact', width: 1, length: C, stage: 0 });
    const error = programError(() => pipeline.addArray({ name: 'big', width: 1, length: C + 1, stage: 1 }));
    expect(error.kind).toBe('capacity');
    expect(error.message).toContain('needs 4480001 bits');
    expect(error.message).toContain('short by 1 bits');
  });

  it('honours per-stage capacities', () => {
    const pipeline = new Pipeline({ stages: 2, mauCapacityBits: [64, 32] });
    pipeline.addArray({ name: 'a', width: 32, length: 2, stage: 0 });
    expect(() => pipeline.addArray({ name: 'b', width: 32, length: 2, stage: 1 })).toThrow(/short by 32 bits/);
    expect(() => new Pipeline({ stages: 3, mauCapacityBits: [1, 2] })).toThrow(SwitchProgramError);
  });

  it('reports 1 000 000 locks × 18 bits (arrays of 1, 1, 8, 8 bits) as 2 250 000 bytes', () => {
    const sw = new Switch(fissLockLayout(1_000_000, [6, 7], [8, 9]));
    expect(sw.pipeline.registerBits()).toBe(18_000_000);
    expect(sw.pipeline.registerBytes()).toBe(2_250_000);
    const description = sw.describe();
    expect(description.registerBytes).toBe(2_250_000);
    expect(description.arrays.map((a) => [a.name, a.width, a.length, a.stage, a.bits])).toEqual([
      ['free', 1, 1_000_000, 4, 1_000_000],
      ['rw', 1, 1_000_000, 5, 1_000_000],
      ['mid[0]', 8, 500_000, 6, 4_000_000],
      ['mid[1]', 8, 500_000, 7, 4_000_000],
      ['inca[0]', 8, 500_000, 8, 4_000_000],
      ['inca[1]', 8, 500_000, 9, 4_000_000],
    ]);
  });

  it('holds the FissLock best allocation (2 mode + 3 mid + 3 inca MAUs) to the last lock', () => {
    const most = 3 * (C / 8); // 1 720 320 locks: three MAUs of 1-byte cells
    const sw = new Switch(fissLockLayout(most, [6, 7, 8], [9, 10, 11]));
    expect(sw.pipeline.registerBits()).toBe(18 * most);
    const pipeline = new Pipeline();
    pipeline.addSplitArray({ name: 'mid', width: 8, length: most, stages: [0, 1, 2] });
    const error = programError(() => pipeline.addSplitArray({ name: 'inca', width: 8, length: most + 1, stages: [3, 4, 5] }));
    expect(error.kind).toBe('capacity');
    expect(error.message).toContain('short by 8 bits');
    // all or nothing: the parts that would have fitted were not allocated
    expect(pipeline.arrays().map((a) => a.name)).toEqual(['mid[0]', 'mid[1]', 'mid[2]']);
    expect(pipeline.register('inca')).toBeUndefined();
  });

  it('locates split-array indexes in contiguous ranges (MAU selection)', () => {
    const pipeline = new Pipeline();
    const mid = pipeline.addSplitArray({ name: 'mid', width: 8, length: 10, stages: [3, 5, 7] });
    expect(mid.partLength).toBe(4);
    expect(mid.parts.map((p) => [p.length, p.stage])).toEqual([[4, 3], [4, 5], [2, 7]]);
    expect(mid.locate(0)).toMatchObject({ array: mid.parts[0], offset: 0 });
    expect(mid.locate(5)).toMatchObject({ array: mid.parts[1], offset: 1 });
    expect(mid.locate(9)).toMatchObject({ array: mid.parts[2], offset: 1 });
    expect(() => mid.locate(10)).toThrow(RegisterAccessError);
    expect(mid.sizeBits).toBe(80);
  });

  it('refuses duplicate names, unknown stages and allocation after the build', () => {
    const pipeline = new Pipeline();
    pipeline.addArray({ name: 'x', width: 8, length: 4, stage: 0 });
    expect(programError(() => pipeline.addArray({ name: 'x', width: 8, length: 4, stage: 1 })).kind).toBe('duplicate-name');
    expect(programError(() => pipeline.addTable('x')).kind).toBe('duplicate-name');
    expect(programError(() => pipeline.addArray({ name: 'y', width: 8, length: 4, stage: 12 })).kind).toBe('bad-array');
    pipeline.seal();
    expect(programError(() => pipeline.addArray({ name: 'z', width: 8, length: 4, stage: 0 })).kind).toBe('sealed');
    expect(programError(() => pipeline.mau(1).addArray({ name: 'z', width: 8, length: 4 })).kind).toBe('sealed');
    expect(programError(() => pipeline.declareStageOrder('late', [...Array(12).keys()], 'r')).kind).toBe('sealed');
  });

  it('accepts only stage orders that are permutations of every stage, with a reason', () => {
    const pipeline = new Pipeline({ stages: 4 });
    const order = pipeline.declareStageOrder('acquire', [0, 2, 1, 3], 'FissLock spec §12.3');
    expect(order.rank).toEqual([0, 2, 1, 3]);
    expect(programError(() => pipeline.declareStageOrder('short', [0, 1, 2], 'r')).kind).toBe('stage-order');
    expect(programError(() => pipeline.declareStageOrder('repeat', [0, 1, 1, 3], 'r')).kind).toBe('stage-order');
    expect(programError(() => pipeline.declareStageOrder('range', [0, 1, 2, 4], 'r')).kind).toBe('stage-order');
    expect(programError(() => pipeline.declareStageOrder('silent', [3, 2, 1, 0], ' ')).kind).toBe('stage-order');
    expect(programError(() => pipeline.declareStageOrder('acquire', [0, 1, 2, 3], 'r')).kind).toBe('duplicate-name');
    expect(pipeline.stageOrders().map((o) => o.name)).toEqual(['default', 'acquire']);
  });
});
