import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// A user kills a compute node and then runs again, all through the command they type: `cluster
// up`, `chaos kill`, then `bench --substrate live`. The bench must run on the survivors, name the
// dead node as down at the start with its clients not started, and not fail the run for it.
const VICTIM = 'compute-2';

interface BenchJson {
  readonly throughput: number;
  readonly acquires: number;
  readonly violations: number;
  readonly failures: number;
  readonly downAtStart?: readonly { node: number; name: string; reason: string; clients: number }[];
  readonly nodeFailures?: readonly unknown[];
}

describe('lockfabric bench --substrate live with a compute node killed before the run', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'lf-dead-start-')), 'cluster');

  beforeAll(async () => {
    const up = await runCli(['cluster', 'up', '--dir', dir, '--compute-nodes', '3']);
    expect(up.code, up.stderr).toBe(0);
    const kill = await runCli(['chaos', 'kill', VICTIM, '--dir', dir]);
    expect(kill.code, kill.stderr).toBe(0);
  }, 90_000);
  afterAll(async () => {
    await runCli(['cluster', 'down', '--dir', dir]);
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }, 60_000);

  it('runs on the survivors and reports the dead node as down at the start', async () => {
    const bench = await runCli(['bench', '--substrate', 'live', '-p', 'caslock', '--clients', '12', '--locks', '50', '--duration-ms', '1500', '--warmup-ops', '0', '--floor-ops', '0', '--cluster-dir', dir, '--json']);
    // 0, or 1 if the checker found a violation: never the run's failure for the dead node
    expect([0, 1], bench.stderr).toContain(bench.code);
    const report = JSON.parse(bench.stdout) as BenchJson;
    expect(report.downAtStart?.map((d) => d.name)).toEqual([VICTIM]);
    expect(report.downAtStart?.[0]?.clients).toBe(4);
    expect(report.downAtStart?.[0]?.reason).toMatch(/not running|refused|did not answer/);
    // its clients are not started, not failed: no failure, no mid-run node failure
    expect(report.failures).toBe(0);
    expect(report.nodeFailures ?? []).toEqual([]);
    expect(report.acquires).toBeGreaterThan(0);
    expect(report.throughput).toBeGreaterThan(0);
  }, 60_000);

  it('exits 4 at once, naming them, when no compute node is up', async () => {
    for (const name of ['compute-1', 'compute-3']) expect((await runCli(['chaos', 'kill', name, '--dir', dir])).code).toBe(0);
    const bench = await runCli(['bench', '--substrate', 'live', '-p', 'caslock', '--clients', '4', '--locks', '10', '--duration-ms', '1000', '--warmup-ops', '0', '--floor-ops', '0', '--cluster-dir', dir, '--json']);
    expect(bench.code, bench.stderr).toBe(4);
    expect(bench.stderr).toMatch(/no compute node is up at the start of the run/);
    for (const name of ['compute-1', VICTIM, 'compute-3']) expect(bench.stderr).toContain(name);
  }, 60_000);
});
