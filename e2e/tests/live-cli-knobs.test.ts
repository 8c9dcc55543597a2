import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// Issue 17's knobs on the live substrate, from the command a user types, on one cluster of
// separate processes (nats-server, memory node, compute nodes, mutual TLS). Counts only.

interface PlacementJson {
  readonly clients: number;
  readonly acquires: number;
  readonly verbs: Readonly<Record<string, number>>;
  readonly verbsPerAcquire: number;
  readonly verbsPerRelease: number;
}
interface BenchJson {
  readonly violations: number;
  readonly livenessViolations: number;
  readonly acquires: number;
  readonly verbsPerAcquire: { readonly total: number };
  readonly placement?: { readonly local: PlacementJson; readonly remote: PlacementJson };
}

describe('lockfabric bench --substrate live: issue 17 knobs', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  const bench = async (args: readonly string[]): Promise<BenchJson> => {
    const { code, stdout, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--floor-ops', '0', '--json', ...args]);
    expect(code, stderr).toBe(0);
    return JSON.parse(stdout) as BenchJson;
  };

  // ALock §3–4: a client beside the table (the memory node's own) takes the lock with the CPU.
  it('alock with --colocated-clients: local acquires issue zero verbs, remote ones do, the checker passes; the verbs mutant is caught', async () => {
    const args = ['--protocol', 'alock', '--clients', '4', '--colocated-clients', '2', '--locks', '4', '--operations', '200'];
    const run = await bench(args);
    expect(run.violations).toBe(0);
    expect(run.livenessViolations).toBe(0);
    const { local, remote } = run.placement!;
    expect([local.clients, remote.clients]).toEqual([2, 2]);
    expect(local.acquires).toBe(100);
    expect(local.verbs).toEqual({});
    expect(remote.verbsPerAcquire).toBeGreaterThanOrEqual(1);
    // the mutant: the memory node's clients see their table as remote and post verbs through the loopback
    const mutant = await bench([...args, '--mutant-local-verbs']);
    expect(mutant.violations).toBe(0);
    expect(mutant.placement!.local.acquires).toBe(100);
    expect(mutant.placement!.local.verbsPerAcquire).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
