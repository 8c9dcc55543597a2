import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { runSpecFromWire, runSpecToWire } from '../wire-form.js';
import { txnWorkloadOf } from './generator.js';
import { formatFissTrace, parseFissTrace, templatesToTrace, traceTemplates } from './trace.js';
import type { TxnRunSpec } from './types.js';

describe('FissLock trace format', () => {
  it('round-trips text losslessly, keeping request order and repeated locks', () => {
    const text = ['7,0,1,42,1', '7,0,1,3,2', '7,0,1,42,2', '8,0,1,0,1', '3,0,1,4294967295,2', ''].join('\n');
    const parsed = parseFissTrace(text);
    expect(parsed).toEqual([
      { id: 7, requests: [{ lock: 42, mode: 'shared' }, { lock: 3, mode: 'exclusive' }, { lock: 42, mode: 'exclusive' }] },
      { id: 8, requests: [{ lock: 0, mode: 'shared' }] },
      { id: 3, requests: [{ lock: 4294967295, mode: 'exclusive' }] },
    ]);
    expect(formatFissTrace(parsed)).toBe(text);
    // As the transaction layer runs them: ascending, a lock wanted in both modes taken exclusive.
    expect(traceTemplates(parsed)[0]).toEqual({ type: 'trace', locks: [{ lock: 3, mode: 'exclusive' }, { lock: 42, mode: 'exclusive' }] });
  });

  it('round-trips generated TATP and TPC-C transactions', () => {
    for (const kind of ['tatp', 'tpcc'] as const) {
      const stream = txnWorkloadOf({ workload: kind === 'tatp' ? { kind, subscribers: 1_000 } : { kind }, seed: 9 }).stream('1/0');
      const templates = Array.from({ length: 2_000 }, () => stream.next());
      const trace = templatesToTrace(templates);
      const text = formatFissTrace(trace);
      expect(parseFissTrace(text)).toEqual(trace);
      expect(formatFissTrace(parseFissTrace(text))).toBe(text);
      expect(traceTemplates(parseFissTrace(text)).map((t) => t.locks)).toEqual(templates.map((t) => t.locks));
    }
  });

  it('lists every bad line', () => {
    let error: unknown;
    try {
      parseFissTrace('1,0,1,5,3\nx\n2,0,2,5,1\n1,0,1,6,1\n');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues).toHaveLength(4);
    expect(issues[0]).toMatch(/line 1: mode must be 1/);
    expect(issues[1]).toMatch(/line 2: expected/);
    expect(issues[2]).toMatch(/line 3: columns 2 and 3/);
    expect(issues[3]).toMatch(/line 4: transaction 1 appears again/);
    expect(() => parseFissTrace('\n')).toThrow(ConfigError);
  });
});

describe('transactional runs on the wire', () => {
  it('carry the transaction spec to compute nodes and hide it from the protocol options', () => {
    const txn: TxnRunSpec = { workload: { kind: 'trace', name: 'hot', transactions: traceTemplates(parseFissTrace('1,0,1,3,2\n1,0,1,1,1\n2,0,1,2,1\n')) }, executeNs: 7_000, seed: 4, maxAttempts: 5, mutantEarlyRelease: true };
    const workload = { clients: 2, locks: 4, readRatio: 0, distribution: 'uniform' as const, operations: 10, thinkNs: 0, criticalSectionNs: 0, seed: 4, transactions: txn };
    const back = runSpecFromWire(runSpecToWire({ protocol: 'caslock', workload, options: { variant: 'rw' } }));
    expect(back.options).toEqual({ variant: 'rw' });
    expect(back.workload.transactions).toEqual(txn);
    const tatp = { ...workload, locks: 700_000, transactions: { workload: { kind: 'tatp' as const, subscribers: 100_000 }, executeNs: 2_800, seed: 1 } };
    expect(runSpecFromWire(runSpecToWire({ protocol: 'dslr', workload: tatp, options: {} })).workload).toEqual(tatp);
  });
});
