import { summarizeVerdict } from '@lockfabric/check';
import { availableProtocols, protocolById } from '@lockfabric/lock-catalog';
import { txnWorkloadOf } from '@lockfabric/workloads';
import type { TxnLogEntry, TxnRunSpec, TxnTemplate, WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';
import { checkTxnRun } from './txn-check.js';

function txnSpec(txn: TxnRunSpec, over: Partial<WorkloadSpec> = {}): WorkloadSpec {
  return { clients: 16, locks: txnWorkloadOf(txn).lockCount, readRatio: 0, distribution: 'uniform', operations: 800, thinkNs: 0, criticalSectionNs: 0, seed: txn.seed, timeoutMs: 20, transactions: txn, ...over };
}

/** Hot little trace: every transaction writes two or three of four locks. */
const HOT: TxnTemplate[] = [
  { type: 'AB', locks: [{ lock: 0, mode: 'exclusive' }, { lock: 1, mode: 'exclusive' }] },
  { type: 'BC', locks: [{ lock: 1, mode: 'exclusive' }, { lock: 2, mode: 'exclusive' }] },
  { type: 'ACD', locks: [{ lock: 0, mode: 'exclusive' }, { lock: 2, mode: 'shared' }, { lock: 3, mode: 'exclusive' }] },
  { type: 'CD', locks: [{ lock: 2, mode: 'exclusive' }, { lock: 3, mode: 'exclusive' }] },
];

describe('transactions on sim through the harness', () => {
  for (const [protocol, workload] of [
    ['caslock', { kind: 'tatp', subscribers: 2_000 }],
    ['shiftlock', { kind: 'tatp', subscribers: 2_000 }],
    ['dslr', { kind: 'tpcc', warehouses: 1 }],
    ['declock', { kind: 'tpcc', warehouses: 1 }],
    ['drtm', { kind: 'tpcc', warehouses: 1 }],
    // Up to 16 locks held at once: one MCS queue node each (before, two per client, and most aborted).
    ['mcs', { kind: 'tpcc', warehouses: 1 }],
    // ALock likewise: one queue descriptor per held lock, sixteen per client.
    ['alock', { kind: 'tpcc', warehouses: 1 }],
  ] as const) {
    it(`${protocol} runs ${workload.kind}: every transaction commits, the log is the history's, and it serializes`, async () => {
      const txn: TxnRunSpec = { workload, executeNs: workload.kind === 'tatp' ? 2_800 : 7_000, seed: 5 };
      const log: TxnLogEntry[] = [];
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById(protocol), spec: txnSpec(txn), onTxnCommit: (e) => log.push(e) });
      expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
      expect(result.cutOff).toBe(false);
      const check = checkTxnRun(result.history, txn, result.summary.elapsedNs);
      expect(check.replay.mismatches).toEqual([]);
      expect(check.summary.committed).toBe(800);
      expect(check.replay.unfinished).toBe(0);
      // The log rebuilt from the history (what live uses) is the log the clients wrote as they committed.
      const byId = (a: TxnLogEntry, b: TxnLogEntry) => a.id.localeCompare(b.id);
      expect([...check.replay.committed].sort(byId)).toEqual([...log].sort(byId));
      expect(check.serializability.ok, JSON.stringify(check.serializability.cycle)).toBe(true);
      expect(check.serializability.edges).toBeGreaterThan(0);
      expect(Object.values(check.summary.byType).reduce((n, t) => n + t.committed, 0)).toBe(800);
      expect(check.summary.committedPerSec).toBeGreaterThan(0);
    }, 120_000);
  }

  // Every protocol of the catalog under strict 2PL: a small TPC-C run whose history passes the
  // exclusion checker and the precedence-graph check, with every transaction committed.
  it.each(availableProtocols().map((p) => p.id))('%s: a TPC-C history is exclusive and conflict-serializable', async (id) => {
    const txn: TxnRunSpec = { workload: { kind: 'tpcc', warehouses: 1 }, executeNs: 7_000, seed: 11 };
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById(id), spec: txnSpec(txn, { clients: 8, operations: 120 }) });
    expect(result.verdict.violations).toEqual([]);
    expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
    const check = checkTxnRun(result.history, txn, result.summary.elapsedNs);
    expect(check.replay.mismatches).toEqual([]);
    expect(check.summary.committed).toBe(120);
    expect(check.serializability.ok, JSON.stringify(check.serializability.cycle)).toBe(true);
    expect(check.serializability.edges).toBeGreaterThan(0);
  }, 60_000);

  // Up to 16 locks held at once (the 2PL maximum): one MCS queue node / ALock descriptor each.
  for (const protocol of ['mcs', 'alock']) {
    it(`${protocol} grants a transaction of 16 locks to every client at once`, async () => {
      const txn: TxnRunSpec = { workload: { kind: 'trace', transactions: [{ type: 'WIDE', locks: Array.from({ length: 16 }, (_, lock) => ({ lock, mode: 'exclusive' as const })) }] }, executeNs: 1_000, seed: 2, maxAttempts: 3 };
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById(protocol), spec: txnSpec(txn, { clients: 4, operations: 8 }) });
      expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
      const check = checkTxnRun(result.history, txn, result.summary.elapsedNs);
      expect(check.summary.committed).toBe(8);
      expect(check.summary.abortsByCode).toEqual({});
    }, 60_000);
  }

  it('a transaction the protocol cannot grant is given up, not retried forever (alock: 17 locks, 16 descriptors)', async () => {
    const txn: TxnRunSpec = { workload: { kind: 'trace', transactions: [{ type: 'WIDE', locks: Array.from({ length: 17 }, (_, lock) => ({ lock, mode: 'exclusive' as const })) }] }, executeNs: 1_000, seed: 2, maxAttempts: 3 };
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('alock'), spec: txnSpec(txn, { clients: 2, operations: 4 }) });
    expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
    const check = checkTxnRun(result.history, txn, result.summary.elapsedNs);
    expect(check.summary.committed).toBe(0);
    expect(check.summary.gaveUpByCode).toEqual({ LOCK_TIMEOUT: 4 });
    expect(check.summary.abortsByCode).toEqual({ LOCK_TIMEOUT: 12 });
  }, 60_000);

  it('aborts on timeouts roll back and retry until the transaction commits', async () => {
    const txn: TxnRunSpec = { workload: { kind: 'trace', transactions: HOT }, executeNs: 20_000, seed: 3, backoff: { initialNs: 1_000, maxNs: 50_000 } };
    // A 10 µs acquire timeout under 20 µs holds: acquires time out, transactions abort and retry.
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: txnSpec(txn, { clients: 8, operations: 200, timeoutMs: 0.01 }) });
    expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
    const check = checkTxnRun(result.history, txn, result.summary.elapsedNs);
    expect(check.summary.committed).toBe(200);
    expect(check.summary.abortsByCode['LOCK_TIMEOUT']).toBeGreaterThan(0);
    expect(check.replay.committed.some((t) => t.attempts > 1)).toBe(true);
    expect(check.serializability.ok).toBe(true);
  }, 120_000);

  it('mutant: releasing a lock before taking the next breaks serializability, and the checker says so', async () => {
    const txn: TxnRunSpec = { workload: { kind: 'trace', transactions: HOT }, executeNs: 2_000, seed: 1, mutantEarlyRelease: true };
    let caught = 0;
    for (const protocol of ['caslock', 'shiftlock']) {
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById(protocol), spec: txnSpec(txn, { clients: 8, operations: 400 }) });
      // Each lock on its own is still exclusive: only the transactions interleave wrongly.
      expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
      const check = checkTxnRun(result.history, txn, result.summary.elapsedNs);
      expect(check.replay.mismatches).toEqual([]);
      if (!check.serializability.ok) {
        caught++;
        const cycle = check.serializability.cycle!;
        expect(cycle.length).toBeGreaterThanOrEqual(2);
        expect(cycle[0]!.from).toBe(cycle[cycle.length - 1]!.to);
      }
    }
    expect(caught).toBeGreaterThan(0);
    // The same run without the mutant serializes.
    const sound = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: txnSpec({ ...txn, mutantEarlyRelease: false }, { clients: 8, operations: 400 }) });
    expect(checkTxnRun(sound.history, txn, sound.summary.elapsedNs).serializability.ok).toBe(true);
  }, 120_000);
});
