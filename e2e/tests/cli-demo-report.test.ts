import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// The report commands as a user runs them: `demo --json` over both families (embedded, so it
// takes seconds), `bench --report` comparing two protocols, and `report` re-rendering saved JSON.
// The papers' RDMA designs and their one-sided and server-CPU baselines, in the catalog's order.
const RDMA = ['caslock', 'dslr', 'dslr-backoff', 'mcs', 'drtm', 'shiftlock', 'declock', 'declock-cql', 'alock', 'rma-rw', 'ncosed', 'sherman', 'rpc', 'traditional', 'traditional-ro'];
const SWITCH = ['fisslock', 'netlock', 'srvlock', 'parlock'];

interface Row {
  protocol: string;
  family: string;
  verdict: string;
  acquires: number;
  switchGrantShare?: number;
  latencyCdfUs?: unknown[];
}

interface TxnRow {
  protocol: string;
  family: string;
  verdict: string;
  serializable: boolean;
  committed: number;
  committedPerSec: number;
  p50Us: number;
  p99Us: number;
}

const root = mkdtempSync(join(tmpdir(), 'lockfabric-report-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('lockfabric demo --json and the report commands', () => {
  it('demo: every protocol of both families passes the checker and the report is written', async () => {
    const dir = join(root, 'demo');
    const { code, stdout, stderr } = await runCli(['demo', '--substrate', 'embedded', '--operations', '300', '--txn-operations', '100', '--json', '--report', dir]);
    expect(code, stderr).toBe(0);
    const demo = JSON.parse(stdout) as { kind: string; results: Row[]; reportHtml: string; transactions: { workload: string; results: TxnRow[] } };
    // The transactions section: TPC-C under 2PL over an RDMA spin lock, an RDMA handover lock and a switch lock.
    expect(demo.transactions.workload).toBe('tpcc');
    expect(demo.transactions.results.map((r) => [r.protocol, r.family])).toEqual([
      ['caslock', 'rdma'],
      ['mcs', 'rdma'],
      ['fisslock', 'switch'],
    ]);
    for (const r of demo.transactions.results) {
      expect([r.verdict, r.serializable], r.protocol).toEqual(['ok', true]);
      expect(r.committed, r.protocol).toBe(100);
      expect(r.committedPerSec, r.protocol).toBeGreaterThan(0);
      expect(r.p99Us, r.protocol).toBeGreaterThanOrEqual(r.p50Us);
    }
    expect(readFileSync(join(dir, 'report.html'), 'utf8').match(/<tr class="transaction result">/g)).toHaveLength(3);
    expect(demo.kind).toBe('demo');
    expect(demo.results.map((r) => [r.protocol, r.family])).toEqual([...RDMA.map((p) => [p, 'rdma']), ...SWITCH.map((p) => [p, 'switch'])]);
    for (const r of demo.results) {
      expect(r.verdict, r.protocol).toBe('ok');
      expect(r.acquires, r.protocol).toBe(300);
      expect(r.latencyCdfUs?.length, r.protocol).toBeGreaterThan(0);
    }
    // FissLock's decider and NetLock's queues grant in the switch; the lock servers never do.
    const share = (p: string) => demo.results.find((r) => r.protocol === p)?.switchGrantShare;
    expect(share('fisslock')).toBeGreaterThan(0);
    expect(share('netlock')).toBeGreaterThan(0);
    expect(share('srvlock')).toBe(0);
    expect(demo.results.filter((r) => r.family === 'rdma').every((r) => r.switchGrantShare === undefined)).toBe(true);
    expect(demo.reportHtml).toBe(join(dir, 'report.html'));
    expect(readdirSync(dir).sort()).toEqual(['latency-cdf.svg', 'report.html', 'report.json', 'switch-share.svg', 'throughput.svg', 'verbs.svg']);
  });

  it('bench --protocol a,b --report: one report with both protocols, re-rendered by `report`', async () => {
    const dir = join(root, 'bench');
    const run = await runCli(['bench', '--protocol', 'caslock,fisslock', '--operations', '200', '--clients', '4', '--locks', '16', '--report', dir, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const bench = JSON.parse(run.stdout) as { kind: string; results: Row[]; reportHtml: string };
    expect(bench.reportHtml).toBe(join(dir, 'report.html'));
    expect(bench.results.map((r) => [r.protocol, r.family, r.verdict])).toEqual([
      ['caslock', 'rdma', 'ok'],
      ['fisslock', 'switch', 'ok'],
    ]);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html.match(/<tr class="result">/g)).toHaveLength(2);

    const out = join(root, 'again');
    const again = await runCli(['report', join(dir, 'report.json'), '--out', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(join(out, 'report.html'));
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toBe(html);
    expect(existsSync(join(out, 'report.json'))).toBe(true);
  });

  it('the mutant CAS lock (acquires without compare) shows as a violation in the report, exit 1', async () => {
    const dir = join(root, 'mutant');
    const run = await runCli(['bench', '--protocol', 'caslock', '--opt', 'mutantSkipCompare=true', '--clients', '4', '--locks', '4', '--operations', '200', '--cs-ns', '1000', '--report', dir, '--json']);
    expect(run.code, run.stderr).toBe(1);
    expect((JSON.parse(run.stdout) as { violations: number }).violations).toBeGreaterThan(0);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<td class="verdict-violation">violation</td>');
    expect(html).not.toContain('<td class="verdict-ok">');
  });

  it('report: bad input exits 2 with every problem listed and no stack trace', async () => {
    const bad = join(root, 'bad.json');
    writeFileSync(bad, JSON.stringify({ kind: 'bench', version: 1, results: [{ protocol: 'x', throughput: 'fast' }] }));
    const invalid = await runCli(['report', bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('results.0.throughput');
    expect(invalid.stderr).toContain('results.0.verbsPerAcquire');
    expect(invalid.stderr).not.toMatch(/\n\s+at /);

    writeFileSync(bad, '{"kind": "pie"}');
    const unknown = await runCli(['report', bad]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown report kind "pie"');

    writeFileSync(bad, 'not json');
    expect((await runCli(['report', bad])).code).toBe(2);
    const missing = await runCli(['report', join(root, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read it (ENOENT)');
    expect((await runCli(['report'])).code).toBe(2);
  });
});
