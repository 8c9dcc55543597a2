import { describe, expect, it } from 'vitest';
import { DEFAULT_SWITCH_TIMING, RegisterAccessError, Switch, SwitchControlError, SwitchProgramError } from '../src/index.js';
import type { EgressAction, MatchTable, RegisterArray, SplitRegisterArray, SwitchProgram } from '../src/index.js';
import { packet } from './support/packets.js';

/**
 * A small lock-home router: `owner` (split over two stages) says which machine manages a lock;
 * a `fallback` table overrides by exact lock id or lock-id range. Routed packets count in `hits`.
 */
function homeRouter(locks = 1000): SwitchProgram {
  let owner: SplitRegisterArray | undefined;
  let hits: RegisterArray | undefined;
  let fallback: MatchTable<number> | undefined;
  return {
    name: 'home-router',
    build(pipeline) {
      hits = pipeline.addArray({ name: 'hits', width: 16, length: 1000, stage: 0 });
      owner = pipeline.addSplitArray({ name: 'owner', width: 8, length: locks, stages: [2, 3], initial: 1 });
      fallback = pipeline.addTable('fallback', {
        parse: (v) => {
          if (typeof v !== 'number') throw new Error('machine id expected');
          return v;
        },
      });
    },
    process(p, _ingress, ctx): EgressAction[] {
      if (!owner || !hits || !fallback) throw new Error('not built');
      const routed = fallback.lookup(p.lock);
      if (routed !== undefined) {
        ctx.decide('fallback');
        return [{ kind: 'unicast', machine: routed, packet: p }];
      }
      if (p.type === 'probe') return [{ kind: 'bounce', packet: p }];
      if (p.type === 'notify') return [{ kind: 'multicast', machines: [], packet: p }];
      ctx.update(hits, p.lock % hits.length, (old) => ({ next: (old + 1) & 0xffff, out: undefined }));
      const { array, offset } = owner.locate(p.lock);
      ctx.decide('home');
      return [{ kind: 'unicast', machine: ctx.read(array, offset), packet: p }];
    },
  };
}

const destination = (actions: EgressAction[]) => (actions[0]?.kind === 'unicast' ? actions[0].machine : undefined);

describe('Switch control plane', () => {
  it('makes register writes visible to the program', () => {
    const sw = new Switch(homeRouter());
    expect(destination(sw.ingest(packet({ lock: 5 }), 9))).toBe(1);
    sw.writeRegister('owner', 5, 7); // part 0
    sw.writeRegister('owner', 900, 8); // part 1
    expect(destination(sw.ingest(packet({ lock: 5 }), 9))).toBe(7);
    expect(destination(sw.ingest(packet({ lock: 900 }), 9))).toBe(8);
    expect(sw.readRegister('owner[1]', 400)).toBe(8); // the physical part, by its own name
  });

  it('makes program writes visible to the control plane', () => {
    const sw = new Switch(homeRouter());
    for (let i = 0; i < 3; i++) sw.ingest(packet({ lock: 42 }), 9);
    expect(sw.readRegister('hits', 42)).toBe(3);
  });

  it('makes table entries and lock-id ranges visible to the program', () => {
    const sw = new Switch(homeRouter());
    sw.setTableRange('fallback', 500, Infinity, 3);
    sw.setTableEntry('fallback', 7, 4);
    expect(destination(sw.ingest(packet({ lock: 7 }), 9))).toBe(4);
    expect(destination(sw.ingest(packet({ lock: 499 }), 9))).toBe(1);
    expect(destination(sw.ingest(packet({ lock: 500 }), 9))).toBe(3);
    expect(destination(sw.ingest(packet({ lock: 1_000_000 }), 9))).toBe(3);
    expect(sw.tableEntries('fallback')).toEqual({ exact: [[7, 4]], ranges: [{ start: 500, end: Infinity, value: 3 }] });
    expect(sw.deleteTableEntry('fallback', 7)).toBe(true);
    expect(sw.deleteTableRange('fallback', 500, Infinity)).toBe(true);
    expect(destination(sw.ingest(packet({ lock: 7 }), 9))).toBe(1);
    expect(sw.counters().decisions).toEqual({ fallback: 3, home: 2 });
    expect(() => sw.setTableEntry('fallback', 1, 'four')).toThrow(/refuses value "four"/);
  });

  it('reads and writes ranges in bulk across split-array parts', () => {
    const locks = 1_000_000;
    const sw = new Switch(homeRouter(locks));
    const values = Uint8Array.from({ length: locks }, (_, i) => (i * 7) % 256);
    sw.writeRegisters('owner', 0, values);
    const back = sw.readRegisters('owner', 0, locks);
    expect(back.length).toBe(locks);
    expect(back.every((v, i) => v === values[i])).toBe(true);
    // a window straddling the boundary between the two parts (500 000)
    sw.writeRegisters('owner', 499_998, [11, 12, 13, 14]);
    expect([...sw.readRegisters('owner', 499_997, 6)]).toEqual([values[499_997], 11, 12, 13, 14, values[500_002]]);
    sw.fillRegisters('owner', 0, 10, 20);
    expect([...sw.readRegisters('owner', 9, 12)]).toEqual([values[9], ...Array(10).fill(0), values[20]]);
    sw.fillRegisters('owner', 1);
    expect(sw.readRegisters('owner', 0, locks).every((v) => v === 1)).toBe(true);
  });

  it('refuses unknown names, out-of-range indexes and oversize values, writing nothing', () => {
    const sw = new Switch(homeRouter());
    expect(() => sw.readRegister('nope', 0)).toThrow(SwitchControlError);
    expect(() => sw.readRegister('nope', 0)).toThrow(/no register array 'nope' \(arrays: owner, hits, owner\[0\], owner\[1\]\)/);
    expect(() => sw.setTableEntry('nope', 0, 1)).toThrow(/no table 'nope' \(tables: fallback\)/);
    expect(() => sw.readRegister('owner', 1000)).toThrow(RegisterAccessError);
    expect(() => sw.readRegisters('owner', 999, 2)).toThrow(RegisterAccessError);
    expect(() => sw.writeRegisters('owner', 498, [5, 5, 5, 256])).toThrow(/value 256 does not fit 8 bits/);
    expect([...sw.readRegisters('owner', 498, 4)]).toEqual([1, 1, 1, 1]);
  });

  it('describes arrays, stages, tables and total bytes', () => {
    const sw = new Switch(homeRouter());
    const d = sw.describe();
    expect(d.program).toBe('home-router');
    expect(d.arrays).toEqual([
      { name: 'hits', width: 16, length: 1000, stage: 0, bits: 16_000, initial: 0 },
      { name: 'owner[0]', width: 8, length: 500, stage: 2, bits: 4000, initial: 1, splitOf: 'owner' },
      { name: 'owner[1]', width: 8, length: 500, stage: 3, bits: 4000, initial: 1, splitOf: 'owner' },
    ]);
    expect(d.splitArrays).toEqual([{ name: 'owner', width: 8, length: 1000, parts: ['owner[0]', 'owner[1]'] }]);
    expect(d.stages).toHaveLength(12);
    expect(d.stages[2]).toEqual({ index: 2, capacityBits: 4_480_000, usedBits: 4000, arrays: ['owner[0]'] });
    expect(d.tables).toEqual([{ name: 'fallback', exactEntries: 0, ranges: 0 }]);
    expect(d.registerBits).toBe(24_000);
    expect(d.registerBytes).toBe(3000);
    expect(d.capacityBits).toBe(12 * 4_480_000);
    expect(d.stageOrders.map((o) => o.name)).toEqual(['default']);
    expect(d.timing).toEqual({ pipelineLatencyNs: 1000 });
  });

  it('restarts with registers at their initial values, counters cleared and tables kept', () => {
    const sw = new Switch(homeRouter());
    sw.writeRegister('owner', 3, 9);
    sw.setTableEntry('fallback', 8, 2);
    sw.ingest(packet({ lock: 3 }), 9);
    sw.restart();
    expect(sw.readRegister('owner', 3)).toBe(1);
    expect(sw.readRegister('hits', 3)).toBe(0);
    expect(sw.counters().packets).toBe(0);
    expect(destination(sw.ingest(packet({ lock: 8 }), 9))).toBe(2);
  });

  it('returns bounces as the program produced them and counts egress kinds', () => {
    const sw = new Switch(homeRouter());
    const p = packet({ type: 'probe', lock: 1 });
    expect(sw.ingest(p, 6)).toEqual([{ kind: 'bounce', packet: p }]);
    expect(sw.counters().egress.bounce).toBe(1);
    expect(sw.counters().decisions).toEqual({ bounce: 1 }); // no ctx.decide: derived from the egress
  });

  it('treats an egress it cannot perform as a program error', () => {
    const sw = new Switch(homeRouter());
    expect(() => sw.ingest(packet({ type: 'notify', lock: 1 }), 6)).toThrow(SwitchProgramError);
    expect(() => sw.ingest(packet({ type: 'notify', lock: 1 }), 6)).toThrow(/multicast to no machines/);
    expect(sw.counters().programErrorsByKind).toEqual({ 'bad-egress': 2 });
  });

  it('has a constant pipeline latency of 1 µs by default, configurable', () => {
    expect(DEFAULT_SWITCH_TIMING.pipelineLatencyNs).toBe(1000);
    expect(new Switch(homeRouter(), { timing: { pipelineLatencyNs: 600 } }).timing.pipelineLatencyNs).toBe(600);
  });

  it('seals the pipeline once the program is built', () => {
    const sw = new Switch(homeRouter());
    expect(sw.pipeline.sealed).toBe(true);
    expect(() => sw.pipeline.addArray({ name: 'late', width: 8, length: 1, stage: 0 })).toThrow(/sealed/);
  });
});
