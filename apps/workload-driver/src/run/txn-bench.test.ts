import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it, vi } from 'vitest';
import { FlagReader, readWorkload } from '../cli/args.js';
import { benchCommand } from '../commands/bench.js';
import { readTxnWorkload } from './txn-bench.js';

const DEFAULTS = { clients: 8, locks: 1000, readRatio: 0, distribution: 'uniform', operations: 10_000 };

async function read(values: Record<string, unknown>, substrate = 'sim') {
  const { spec, reader } = readWorkload(values, DEFAULTS);
  const out = await readTxnWorkload(values, reader, spec, substrate);
  return { spec, out, problems: reader.problems };
}

describe('bench --workload', () => {
  it('micro leaves the workload as it was, and refuses transaction flags', async () => {
    const { spec, out, problems } = await read({ locks: '16' });
    expect(out).toBe(spec);
    expect(problems).toEqual([]);
    expect((await read({ warehouses: '3', 'txn-think-ns': '5' })).problems).toEqual([
      '--warehouses applies to transactional workloads (--workload tatp|tpcc|smallbank|trace:FILE)',
      '--txn-think-ns applies to transactional workloads (--workload tatp|tpcc|smallbank|trace:FILE)',
    ]);
  });

  it('tpcc sizes the lock table, the execution time and the timeout per substrate', async () => {
    const sim = (await read({ workload: 'tpcc', warehouses: '2', seed: '4' })).out;
    expect(sim).toMatchObject({ locks: 12_084, timeoutMs: 10, transactions: { workload: { kind: 'tpcc', warehouses: 2 }, executeNs: 7_000, seed: 4 } });
    expect((await read({ workload: 'tatp', subscribers: '1000' }, 'live')).out).toMatchObject({ timeoutMs: 2_000, transactions: { executeNs: 2_800 } });
  });

  it('--colocate-warehouses puts warehouse w on compute node 1 + (w mod n) on sim, and says what is wrong elsewhere', async () => {
    const sim = (await read({ workload: 'tpcc', warehouses: '4', 'compute-nodes': '2', 'colocate-warehouses': true })).out;
    expect(sim).toMatchObject({ locks: 24_168, transactions: { workload: { kind: 'tpcc', warehouses: 4, colocate: [1, 2] } } });
    expect((await read({ workload: 'tpcc', warehouses: '3', 'compute-nodes': '2', 'colocate-warehouses': true }, 'live')).problems).toEqual([
      '--colocate-warehouses: runs on --substrate sim only',
      '--colocate-warehouses: --warehouses 3 must be a multiple of --compute-nodes 2',
    ]);
    expect((await read({ workload: 'tatp', 'colocate-warehouses': true })).problems).toEqual(['--colocate-warehouses applies to --workload tpcc']);
  });

  it('lists every problem at once', async () => {
    const { problems } = await read({ workload: 'tpcc', locks: '5', 'read-ratio': '0.5', subscribers: '9', warehouses: '0', 'max-attempts': '1.5' });
    expect(problems).toEqual([
      '--locks applies to --workload micro; tpcc defines its own locks and modes',
      '--read-ratio applies to --workload micro; tpcc defines its own locks and modes',
      '--subscribers applies to --workload tatp',
      '--warehouses: expected an integer ≥ 1, got "0"',
      '--max-attempts: expected an integer ≥ 1, got "1.5"',
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'txn-bench-'));
    writeFileSync(join(dir, 'bad.trace'), '1,0,1,2,3\n');
    expect((await read({ workload: `trace:${join(dir, 'bad.trace')}` })).problems).toEqual([`--workload trace:${join(dir, 'bad.trace')}: trace line 1: mode must be 1 (shared) or 2 (exclusive), got 3`]);
    expect((await read({ workload: 'tpc-c' })).problems).toEqual(['--workload: expected micro, tatp, tpcc, trace:FILE, smallbank, objectstore, btree or dynamic, got "tpc-c"']);
    const reader = new FlagReader({});
    reader.problems.push(...problems);
    expect(() => reader.done()).toThrow(ConfigError);
  });

  it('exits 1 when the 2PL mutant makes a run non-serializable, 0 without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'txn-bench-'));
    const trace = join(dir, 'hot.trace');
    writeFileSync(trace, '1,0,1,0,2\n1,0,1,1,2\n2,0,1,1,2\n2,0,1,2,2\n3,0,1,0,2\n3,0,1,2,2\n');
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const args = ['--protocol', 'caslock', '--workload', `trace:${trace}`, '--txn-think-ns', '2000', '--clients', '8', '--operations', '400', '--json'];
      expect(await benchCommand([...args, '--mutant-early-release'])).toBe(1);
      const mutant = JSON.parse(String(log.mock.calls.at(-1)![0])) as { violations: number; transactions: { serializable: boolean; cycle: unknown[] } };
      expect(mutant.violations).toBe(0);
      expect(mutant.transactions.serializable).toBe(false);
      expect(mutant.transactions.cycle.length).toBeGreaterThanOrEqual(2);
      expect(await benchCommand(args)).toBe(0);
      expect(JSON.parse(String(log.mock.calls.at(-1)![0]))).toMatchObject({ transactions: { serializable: true, committed: 400 } });
    } finally {
      log.mockRestore();
    }
  }, 60_000);
});
