import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// `lockfabric demo` on the live substrate as a user runs it: real nats-server, every service its own
// process. The RDMA family and srvlock/parlock share the demo's cluster (its switch forwards);
// fisslock and netlock each get a temporary cluster whose switch runs their program. Run in an
// empty folder so that no cluster a user or another test left in .lockfabric/ is picked up.
const cwd = mkdtempSync(join(tmpdir(), 'lockfabric-live-demo-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

interface Row {
  protocol: string;
  family: string;
  substrate: string;
  verdict: string;
  acquires: number;
  failures: number;
  switchGrantShare?: number;
  warmUp?: { operations: number };
}

describe('lockfabric demo --substrate live --json', () => {
  it('every protocol of both families passes the checker on live processes', async () => {
    const { code, stdout, stderr } = await runCli(['demo', '--substrate', 'live', '--operations', '300', '--json'], process.env, cwd);
    expect(code, stderr).toBe(0);
    const demo = JSON.parse(stdout) as { substrate: string; results: Row[]; reportHtml: string; transport?: unknown; transactions: { results: { protocol: string; verdict: string; committed: number }[] } };
    // The transactions section (TPC-C, 2PL) ran on the same live processes, fisslock on its own switch program.
    expect(demo.transactions.results.map((r) => [r.protocol, r.verdict])).toEqual([
      ['caslock', 'ok'],
      ['mcs', 'ok'],
      ['fisslock', 'ok'],
    ]);
    for (const r of demo.transactions.results) expect(r.committed, r.protocol).toBe(200);
    expect(demo.substrate).toBe('live');
    expect(demo.transport).toBeDefined();
    expect(demo.results.filter((r) => r.family === 'rdma')).toHaveLength(15);
    expect(demo.results.filter((r) => r.family === 'switch').map((r) => r.protocol)).toEqual(['fisslock', 'netlock', 'srvlock', 'parlock']);
    for (const r of demo.results) {
      expect(r.substrate, r.protocol).toBe('live');
      expect(r.verdict, r.protocol).toBe('ok');
      // Every acquire completed or failed with a typed error (failures also counts releases).
      expect(r.acquires + r.failures, r.protocol).toBeGreaterThanOrEqual(300);
      // each ran a quarter of its operations untimed first, not counted in the figures above
      expect(r.warmUp?.operations, r.protocol).toBe(75);
    }
    // Read back from each run's switch: only the programs that grant in the switch report a share.
    const share = (p: string) => demo.results.find((r) => r.protocol === p)?.switchGrantShare;
    expect(share('fisslock')).toBeGreaterThan(0);
    expect(share('netlock')).toBeGreaterThan(0);
    expect(share('srvlock')).toBe(0);
    expect(share('parlock')).toBe(0);
    expect(existsSync(join(cwd, '.lockfabric', 'demo', 'report.html'))).toBe(true);
    // Every temporary cluster was stopped: no cluster state is left behind.
    const left = readdirSync(join(cwd, '.lockfabric')).flatMap((d) => (existsSync(join(cwd, '.lockfabric', d, 'cluster.json')) ? [d] : []));
    expect(left).toEqual([]);
  }, 360_000);
});
