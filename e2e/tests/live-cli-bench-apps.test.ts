import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// DecLock's applications over the live substrate, through the command a user types: the driver
// loads the data into the memory nodes' data region, compute nodes run the application loop with
// data verbs on the same queue pairs as their lock verbs and send back their logs, and the driver
// checks the data on the memory nodes after the run.

interface AppJson {
  readonly workload: string;
  readonly ops: number;
  readonly opsByKind: Record<string, number>;
  readonly dataVerbsPerOp: Record<string, number>;
  readonly verbsPerOp: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly tree?: { splits: number; keys: number; nodes: number; height: number };
  readonly check: { ok: boolean; problems: string[] };
}

describe('lockfabric bench --substrate live --workload objectstore|btree', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  const bench = async (args: readonly string[]) => {
    const { code, stdout, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, ...args, '--seed', '5', '--json']);
    expect(code, stderr).toBe(0);
    return JSON.parse(stdout) as { violations: number; acquires: number; application: AppJson };
  };

  it('btree (declock): after concurrent inserts from 32 clients the tree is well-formed and holds every committed key', async () => {
    const report = await bench(['--protocol', 'declock', '--workload', 'btree', '--keys', '400', '--fanout', '8', '--lookup-ratio', '0', '--insert-ratio', '1', '--clients', '32', '--operations', '400']);
    expect(report.violations).toBe(0);
    const a = report.application;
    expect(a.check.problems).toEqual([]);
    expect(a.check.ok).toBe(true);
    expect(a.ops).toBe(400);
    expect(a.opsByKind['insert']).toBe(400);
    // 400 bulk-loaded keys and up to 400 new ones in fan-out 8 leaves: the inserts split nodes.
    expect(a.tree!.splits).toBeGreaterThan(0);
    expect(a.tree!.keys).toBeGreaterThan(400);
    expect(a.tree!.keys).toBeLessThanOrEqual(800);
  }, 180_000);

  it('objectstore (caslock): one data verb per operation on top of the lock verbs; the content check passes', async () => {
    const report = await bench(['--protocol', 'caslock', '--workload', 'objectstore', '--objects', '50', '--clients', '16', '--operations', '300']);
    expect(report.violations).toBe(0);
    const a = report.application;
    expect(a.check.ok, a.check.problems.join('\n')).toBe(true);
    expect(a.ops).toBe(300);
    expect(report.acquires).toBe(300);
    expect(a.dataVerbsPerOp['read']! * 300).toBeCloseTo(a.opsByKind['get']!, 6);
    expect(a.dataVerbsPerOp['write']! * 300).toBeCloseTo(a.opsByKind['set']!, 6);
    // At least a CAS to acquire and a WRITE to release, plus the data verb.
    expect(a.verbsPerOp).toBeGreaterThanOrEqual(3);
    expect(a.p99Us).toBeGreaterThanOrEqual(a.p50Us);
  }, 180_000);
});
