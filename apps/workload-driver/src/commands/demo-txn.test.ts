import type { TxnRunSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from '../run/in-memory.js';
import { DEMO_TXN_PROTOCOLS, demoTxnRow, demoTxnSpec, readTxnProtocols } from './demo-txn.js';

describe('demo transactions section', () => {
  it('reads --txn-protocols from the catalog and lists every unknown id', () => {
    const problems: string[] = [];
    expect(readTxnProtocols(undefined, problems)).toEqual([...DEMO_TXN_PROTOCOLS]);
    expect(readTxnProtocols('none', problems)).toEqual([]);
    expect(readTxnProtocols('dslr, mcs', problems)).toEqual(['dslr', 'mcs']);
    expect(problems).toEqual([]);
    readTxnProtocols('caslock,nope,zap', problems);
    expect(problems).toEqual(['--txn-protocols: unknown protocol "nope"', '--txn-protocols: unknown protocol "zap"']);
  });

  it('a run is ok when it serializes; the 2PL mutant turns the row into a violation', async () => {
    const spec = demoTxnSpec(120, 'sim');
    const ok = await runInMemory({ substrate: 'sim', protocol: 'caslock', spec });
    const row = demoTxnRow('caslock', spec, ok.history, ok.summary.elapsedNs, ok.verdict.violations.length);
    expect(row).toMatchObject({ protocol: 'caslock', family: 'rdma', committed: 120, serializable: true, verdict: 'ok' });
    expect(row.p99Us).toBeGreaterThanOrEqual(row.p50Us);
    // Mutant: the first lock goes before the second is taken (not two-phase). A small hot trace
    // makes the resulting precedence cycle certain.
    const txn: TxnRunSpec = {
      workload: { kind: 'trace', transactions: [{ type: 'AB', locks: [{ lock: 0, mode: 'exclusive' }, { lock: 1, mode: 'exclusive' }] }] },
      executeNs: 2_000,
      seed: 1,
      mutantEarlyRelease: true,
    };
    const hot = { ...spec, locks: 2, operations: 200, transactions: txn };
    const bad = await runInMemory({ substrate: 'sim', protocol: 'caslock', spec: hot });
    expect(demoTxnRow('caslock', hot, bad.history, bad.summary.elapsedNs, bad.verdict.violations.length)).toMatchObject({ serializable: false, verdict: 'violation' });
  }, 60_000);
});
