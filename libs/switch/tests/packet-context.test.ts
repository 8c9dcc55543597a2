import { describe, expect, it } from 'vitest';
import { RegisterAccessError, RegisterArray, Switch, SwitchProgramError } from '../src/index.js';
import type { EgressAction, PacketContext, Pipeline, SwitchProgram } from '../src/index.js';
import type { LockPacket } from '@lockfabric/ports';
import { packet } from './support/packets.js';

interface Arrays {
  bit: RegisterArray;
  bitLate: RegisterArray;
  early: RegisterArray;
  sameStage: RegisterArray;
  late: RegisterArray;
}

/** A program whose per-packet behaviour is the test's `body`; arrays: bit(1) stage 1, early(8) stage 1, sameStage(8) stage 1, late(16) stage 3. */
function testProgram(body: (ctx: PacketContext, a: Arrays, p: LockPacket) => void, extraBuild?: (pipeline: Pipeline) => void): SwitchProgram {
  let arrays: Arrays | undefined;
  return {
    name: 'test',
    build(pipeline) {
      arrays = {
        bit: pipeline.addArray({ name: 'bit', width: 1, length: 64, stage: 1 }),
        bitLate: pipeline.addArray({ name: 'bit-late', width: 1, length: 64, stage: 3 }),
        early: pipeline.addArray({ name: 'early', width: 8, length: 64, stage: 1 }),
        sameStage: pipeline.addArray({ name: 'same-stage', width: 8, length: 64, stage: 1 }),
        late: pipeline.addArray({ name: 'late', width: 16, length: 64, stage: 3 }),
      };
      extraBuild?.(pipeline);
    },
    process(p, _ingress, ctx): EgressAction[] {
      body(ctx, arrays as Arrays, p);
      return [{ kind: 'unicast', machine: 9, packet: p }];
    },
  };
}

function rejection(sw: Switch, p = packet()): SwitchProgramError {
  try {
    sw.ingest(p, 1);
  } catch (error) {
    if (error instanceof SwitchProgramError) return error;
    throw error;
  }
  throw new Error('the packet was accepted');
}

const inc = (old: number) => ({ next: old + 1, out: old });

describe('per-packet access discipline', () => {
  it('accepts one access per array per packet, packet after packet', () => {
    const sw = new Switch(testProgram((ctx, a) => {
      ctx.update(a.early, 3, inc);
      ctx.update(a.late, 3, inc);
    }));
    for (let i = 0; i < 5; i++) sw.ingest(packet(), 1);
    expect(sw.readRegister('early', 3)).toBe(5);
    expect(sw.readRegister('late', 3)).toBe(5);
  });

  it('rejects two read-modify-writes of one array in one packet', () => {
    const sw = new Switch(testProgram((ctx, a) => {
      ctx.update(a.early, 3, inc);
      ctx.update(a.early, 4, inc);
    }));
    const error = rejection(sw, packet({ lock: 3 }));
    expect(error.kind).toBe('double-access');
    expect(error.message).toContain("second access to register array 'early' (update then update)");
    expect(sw.readRegister('early', 3)).toBe(0); // the first update was undone
  });

  it.each([
    ['read then write', (ctx: PacketContext, a: Arrays) => (ctx.read(a.early, 0), ctx.write(a.early, 0, 1))],
    ['write then read', (ctx: PacketContext, a: Arrays) => (ctx.write(a.early, 0, 1), ctx.read(a.early, 0))],
    ['read then read', (ctx: PacketContext, a: Arrays) => (ctx.read(a.late, 0), ctx.read(a.late, 1))],
    ['set then read on a 1-bit array', (ctx: PacketContext, a: Arrays) => (ctx.set(a.bit, 0), ctx.read(a.bit, 0))],
    ['clear then set', (ctx: PacketContext, a: Arrays) => (ctx.clear(a.bit, 0), ctx.set(a.bit, 1))],
  ])('rejects any second access: %s', (_name, body) => {
    expect(rejection(new Switch(testProgram(body))).kind).toBe('double-access');
  });

  it('rejects a conditional update of a 1-bit array, and a plain write', () => {
    const update = rejection(new Switch(testProgram((ctx, a) => ctx.update(a.bit, 0, (old) => ({ next: old ? 0 : 1, out: old })))));
    expect(update.kind).toBe('one-bit-conditional');
    expect(update.message).toContain("update on 1-bit array 'bit'");
    expect(rejection(new Switch(testProgram((ctx, a) => ctx.write(a.bit, 0, 1)))).kind).toBe('one-bit-conditional');
  });

  it('gives 1-bit arrays unconditional set and clear that return the old bit', () => {
    const seen: number[] = [];
    const sw = new Switch(testProgram((ctx, a, p) => seen.push(p.mode === 'shared' ? ctx.set(a.bit, p.lock) : ctx.clear(a.bit, p.lock))));
    sw.ingest(packet({ lock: 7, mode: 'shared' }), 1);
    sw.ingest(packet({ lock: 7, mode: 'shared' }), 1);
    sw.ingest(packet({ lock: 7, mode: 'exclusive' }), 1);
    sw.ingest(packet({ lock: 7, mode: 'exclusive' }), 1);
    expect(seen).toEqual([0, 1, 1, 0]);
    expect(sw.readRegister('bit', 7)).toBe(0);
  });

  it('rejects set and clear on wider arrays', () => {
    expect(rejection(new Switch(testProgram((ctx, a) => ctx.set(a.early, 0)))).kind).toBe('not-one-bit');
  });

  it('rejects an access that goes back to an earlier stage', () => {
    const sw = new Switch(testProgram((ctx, a) => {
      ctx.read(a.late, 0); // stage 3
      ctx.write(a.early, 0, 1); // stage 1
    }));
    const error = rejection(sw);
    expect(error.kind).toBe('stage-order');
    expect(error.message).toContain("write of 'early' (stage 1) after 'late' (stage 3) goes backwards in stage order 'default'");
  });

  it('allows arrays of one stage in any order, and forward jumps', () => {
    const sw = new Switch(testProgram((ctx, a) => {
      ctx.write(a.sameStage, 0, 2);
      ctx.set(a.bit, 0);
      ctx.write(a.early, 0, 1);
      ctx.clear(a.bitLate, 0);
      ctx.read(a.late, 0);
    }));
    expect(sw.ingest(packet(), 1)).toHaveLength(1);
  });

  it('lets a packet follow a declared stage order, still forward-only within it', () => {
    const order = [0, 3, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11]; // stage 3 before stage 1
    const declare = (pipeline: Pipeline) => void pipeline.declareStageOrder('late-first', order, 'test: like FissLock ACQUIRE (§12.3)');
    const ok = new Switch(testProgram((ctx, a) => {
      ctx.useStageOrder('late-first');
      ctx.read(a.late, 0);
      ctx.write(a.early, 0, 1);
    }, declare));
    ok.ingest(packet(), 1);
    expect(ok.readRegister('early', 0)).toBe(1);

    const backwards = new Switch(testProgram((ctx, a) => {
      ctx.useStageOrder('late-first');
      ctx.read(a.early, 0);
      ctx.read(a.late, 0);
    }, declare));
    expect(rejection(backwards).kind).toBe('stage-order');

    const late = new Switch(testProgram((ctx, a) => {
      ctx.read(a.late, 0);
      ctx.useStageOrder('late-first');
    }, declare));
    expect(rejection(late).message).toContain("chosen after the packet already accessed 'late'");

    const unknown = new Switch(testProgram((ctx) => ctx.useStageOrder('nope')));
    expect(rejection(unknown).message).toContain("stage order 'nope' was not declared");
  });

  it('returns to the default order for the next packet', () => {
    let first = true;
    const sw = new Switch(testProgram((ctx, a) => {
      if (first) ctx.useStageOrder('late-first');
      first = false;
      ctx.read(a.late, 0);
      ctx.read(a.early, 0);
    }, (pipeline) => void pipeline.declareStageOrder('late-first', [0, 3, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11], 'test')));
    sw.ingest(packet(), 1);
    expect(rejection(sw).kind).toBe('stage-order');
  });

  it('rejects arrays that are not part of the pipeline', () => {
    const stray = new RegisterArray({ name: 'early', width: 8, length: 64, stage: 1 });
    expect(rejection(new Switch(testProgram((ctx) => ctx.read(stray, 0)))).kind).toBe('foreign-array');
  });

  it('rejects out-of-bounds indexes and oversize values, undoing earlier writes', () => {
    const oob = new Switch(testProgram((ctx, a) => (ctx.write(a.early, 1, 5), ctx.read(a.late, 64))));
    expect(() => oob.ingest(packet(), 1)).toThrow(RegisterAccessError);
    expect(oob.readRegister('early', 1)).toBe(0);
    const big = new Switch(testProgram((ctx, a) => ctx.update(a.early, 0, () => ({ next: 256, out: 0 }))));
    expect(() => big.ingest(packet(), 1)).toThrow(/value 256 does not fit 8 bits/);
  });

  it('in drop mode, a violating packet is dropped, undone and counted; the switch keeps working', () => {
    const sw = new Switch(
      testProgram((ctx, a, p) => {
        ctx.set(a.bit, p.lock);
        ctx.update(a.early, p.lock, inc);
        if (p.type === 'release') ctx.update(a.early, p.lock, inc); // the bug
      }),
      { onProgramError: 'drop' },
    );
    expect(sw.ingest(packet({ type: 'release', lock: 2 }), 1)).toEqual([{ kind: 'drop', reason: 'program-error' }]);
    expect(sw.readRegister('bit', 2)).toBe(0);
    expect(sw.readRegister('early', 2)).toBe(0);
    sw.ingest(packet({ type: 'acquire', lock: 2 }), 1);
    expect(sw.readRegister('bit', 2)).toBe(1);
    expect(sw.readRegister('early', 2)).toBe(1);
    const counters = sw.counters();
    expect(counters.programErrors).toBe(1);
    expect(counters.programErrorsByKind).toEqual({ 'double-access': 1 });
    expect(counters.dropsByReason).toEqual({ 'program-error': 1 });
    expect(counters.decisions).toEqual({ 'program-error': 1, unicast: 1 });
  });
});
