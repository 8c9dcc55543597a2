import { checkTxnRun } from '@lockfabric/harness';
import { txnWorkloadOf } from '@lockfabric/workloads';
import type { TxnRunSpec, WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it, vi } from 'vitest';
import { readWorkload } from '../cli/args.js';
import { benchCommand } from '../commands/bench.js';
import { runInMemory } from './in-memory.js';
import { readTxnWorkload } from './txn-bench.js';

/**
 * DSLR Fig. 10/11 in small: TPC-C on one warehouse with 5 ms customer-table scans, λ = 2 ms.
 * A scan outlives a one-slot lease (2 ms) but not a three-slot one (6 ms).
 */
const SCANS = ['-p', 'dslr', '-w', 'tpcc', '--warehouses', '1', '-c', '16', '--duration-ms', '60', '--timeout-ms', '30', '--long-read-probability', '0.02', '--long-read-ns', '5000000', '--opt', 'leaseNs=2000000'];

interface TxnJson {
  violations: number;
  transactions: { committed: number; abortsByCode: Record<string, number>; byType: Record<string, { committed: number }>; serializable: boolean; logMismatches: string[] };
}

async function bench(args: string[]): Promise<{ code: number; report: TxnJson }> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const code = await benchCommand([...args, '--json']);
    return { code, report: JSON.parse(String(log.mock.calls.at(-1)![0])) as TxnJson };
  } finally {
    log.mockRestore();
  }
}

describe('bench --long-read-probability (DSLR long-running reads and leases)', () => {
  it('reads the flags into the tpcc spec, and refuses them elsewhere', async () => {
    const values = { workload: 'tpcc', warehouses: '2', 'long-read-probability': '0.01', 'long-read-slots': '4' };
    const { spec, reader } = readWorkload(values, { clients: 8, locks: 1000, readRatio: 0, distribution: 'uniform', operations: 100 });
    const out = await readTxnWorkload(values, reader, spec, 'sim');
    expect(reader.problems).toEqual([]);
    // Two CUSTOMER table locks come first; the rest of the layout follows.
    expect(out).toMatchObject({ locks: 12_086, transactions: { workload: { kind: 'tpcc', longReads: { probability: 0.01, scanNs: 20_000_000, slots: 4 } } } });
    const bad = { workload: 'tatp', 'long-read-probability': '2' };
    const r = readWorkload(bad, { clients: 8, locks: 1000, readRatio: 0, distribution: 'uniform', operations: 100 });
    await readTxnWorkload(bad, r.reader, r.spec, 'sim');
    expect(r.reader.problems).toEqual(['--long-read-probability applies to --workload tpcc (DSLR Fig. 10 scans its CUSTOMER table)']);
  });

  it('a fixed lease voids every scan (LEASE_EXPIRED aborts); a multi-slot lease commits them with no abort', async () => {
    const fixed = await bench(SCANS);
    expect(fixed.code).toBe(0);
    expect(fixed.report.violations).toBe(0);
    expect(fixed.report.transactions.serializable).toBe(true);
    expect(fixed.report.transactions.abortsByCode['LEASE_EXPIRED']).toBeGreaterThan(0);
    expect(fixed.report.transactions.byType['CUSTOMER_SCAN']?.committed).toBe(0);
    const multi = await bench([...SCANS, '--long-read-slots', '3', '--opt', 'maxSlots=3']);
    expect(multi.code).toBe(0);
    expect(multi.report.transactions.serializable).toBe(true);
    expect(multi.report.transactions.abortsByCode).toEqual({});
    expect(multi.report.transactions.byType['CUSTOMER_SCAN']?.committed).toBeGreaterThan(0);
    expect(multi.report.transactions.committed).toBeGreaterThan(fixed.report.transactions.committed);
  }, 60_000);

  it('mutant: committing despite an expired lease is caught, the history no longer follows the transaction streams', async () => {
    const txn: TxnRunSpec = { workload: { kind: 'tpcc', warehouses: 1, longReads: { probability: 0.02, scanNs: 5_000_000, slots: 1 } }, executeNs: 7_000, seed: 1, mutantCommitExpiredLease: true };
    const spec: WorkloadSpec = { clients: 16, locks: txnWorkloadOf(txn).lockCount, readRatio: 0, distribution: 'uniform', operations: 100_000, durationMs: 60, thinkNs: 0, criticalSectionNs: 0, seed: 1, timeoutMs: 30, transactions: txn };
    const result = await runInMemory({ substrate: 'sim', protocol: 'dslr', protocolOptions: { leaseNs: 2_000_000 }, spec });
    const check = checkTxnRun(result.history, txn, result.summary.elapsedNs);
    expect(check.replay.mismatches.length).toBeGreaterThan(0);
  }, 60_000);
});
