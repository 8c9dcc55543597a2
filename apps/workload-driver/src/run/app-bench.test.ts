import { describe, expect, it, vi } from 'vitest';
import { readWorkload } from '../cli/args.js';
import { benchCommand } from '../commands/bench.js';
import { readAppWorkload } from './app-bench.js';

const DEFAULTS = { clients: 8, locks: 1000, readRatio: 0, distribution: 'uniform', operations: 10_000 };

function read(values: Record<string, unknown>) {
  const { spec, reader } = readWorkload(values, DEFAULTS);
  return { spec, out: readAppWorkload(values, reader, spec), problems: reader.problems };
}

describe('bench --workload objectstore|btree', () => {
  it("takes DecLock's defaults: 414-byte objects, 65 % gets, zipf 0.99, one lock per object", () => {
    expect(read({ workload: 'objectstore' }).out).toMatchObject({ locks: 100_000, distribution: { zipf: 0.99 }, application: { kind: 'objectstore', objects: 100_000, objectBytes: 414, getRatio: 0.65 } });
    const tree = read({ workload: 'btree', keys: '500', fanout: '8', 'insert-ratio': '0.2', distribution: 'uniform' }).out;
    expect(tree).toMatchObject({ distribution: 'uniform', application: { kind: 'btree', keys: 500, fanout: 8, lookupRatio: 0.5, insertRatio: 0.2 } });
    expect(tree.locks).toBeGreaterThan(500 / 8);
  });

  it('lists every problem at once', () => {
    expect(read({ workload: 'btree', locks: '5', objects: '3', fanout: '2', 'lookup-ratio': '0.7', 'insert-ratio': '0.6' }).problems).toEqual([
      '--locks does not apply to --workload btree; it defines its own locks and modes',
      '--objects applies to --workload objectstore',
      '--fanout: expected an integer ≥ 4 and ≤ 1024, got "2"',
      '--workload btree: btree lookup ratio + insert ratio must be at most 1 (got 0.7 + 0.6)',
    ]);
    expect(read({ keys: '10', 'mutant-skip-lock': true }).problems).toEqual(['--mutant-skip-lock applies to --workload objectstore or smallbank', '--keys applies to --workload btree']);
  });

  it('exits 1 when the skip-lock mutant tears the store, 0 without it; verbs per op include the data verb', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const args = ['--protocol', 'declock', '--workload', 'objectstore', '--objects', '20', '--clients', '16', '--operations', '800', '--json'];
      expect(await benchCommand(args)).toBe(0);
      const ok = JSON.parse(String(log.mock.calls.at(-1)![0])) as { acquires: number; application: { ops: number; opsByKind: Record<string, number>; dataVerbsPerOp: Record<string, number>; verbsPerOp: number; check: { ok: boolean } } };
      expect(ok.application.check.ok).toBe(true);
      expect(ok.application.ops).toBe(800);
      expect(ok.acquires).toBe(800);
      // One data verb per operation: a READ per get, a WRITE per set.
      expect(ok.application.dataVerbsPerOp['read']! * 800).toBeCloseTo(ok.application.opsByKind['get']!, 6);
      expect(ok.application.dataVerbsPerOp['write']! * 800).toBeCloseTo(ok.application.opsByKind['set']!, 6);
      // A lock costs at least one verb at the memory node, so the total per op exceeds one.
      expect(ok.application.verbsPerOp).toBeGreaterThan(2);
      expect(await benchCommand([...args, '--mutant-skip-lock'])).toBe(1);
      const mutant = JSON.parse(String(log.mock.calls.at(-1)![0])) as { violations: number; application: { check: { ok: boolean; counts: { uncommitted: number } } } };
      expect(mutant.violations).toBe(0);
      expect(mutant.application.check.ok).toBe(false);
      expect(mutant.application.check.counts.uncommitted).toBeGreaterThan(0);
    } finally {
      log.mockRestore();
    }
  }, 60_000);
});
