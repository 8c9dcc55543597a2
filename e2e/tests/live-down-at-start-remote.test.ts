import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalChaos } from '@lockfabric/workload-driver';
import type { ClusterState } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// The sibling of live-dead-compute-at-start for the two ways a node could slip past the start
// check: cut off by the cut proxy (which accepts the connection, so the node looked up), and a
// cluster given by address (`--compute-nodes-at`), whose discovery asked every node first and
// failed the whole run for one dead compute node. All through the commands a user types.
const VICTIM = 'compute-2';

interface BenchJson {
  readonly acquires: number;
  readonly failures: number;
  readonly downAtStart?: readonly { node: number; name: string; reason: string; clients: number }[];
  readonly nodeFailures?: readonly unknown[];
}

describe('lockfabric bench --substrate live with a compute node cut off or dead before the run', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'lf-down-remote-')), 'cluster');
  const tls = () => ({ ...process.env, LOCKFABRIC_TLS_CA: join(dir, 'tls', 'ca.crt'), LOCKFABRIC_TLS_CERT: join(dir, 'tls', 'operator.crt'), LOCKFABRIC_TLS_KEY: join(dir, 'tls', 'operator.key') });
  const workload = ['bench', '--substrate', 'live', '-p', 'caslock', '--clients', '12', '--locks', '50', '--duration-ms', '1500', '--warmup-ops', '0', '--floor-ops', '0', '--json'];
  let state: ClusterState;
  /** The flags that give the cluster by address, as a Kubernetes user would (the operator certificate from the environment). */
  let remote: string[];

  beforeAll(async () => {
    const up = await runCli(['cluster', 'up', '--dir', dir, '--compute-nodes', '3', '--cut-proxy']);
    expect(up.code, up.stderr).toBe(0);
    state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
    const computes = state.processes.filter((p) => p.role === 'compute');
    const memory = state.processes.find((p) => p.role === 'memory')!;
    remote = [
      '--compute-nodes-at', computes.map((c) => `127.0.0.1:${c.grpc}`).join(','),
      '--memory-nodes-at', `127.0.0.1:${memory.grpc}`,
      '--compute-memory-port', computes.map((c) => String(c.memoryGrpc)).join(','),
    ];
  }, 120_000);
  afterAll(async () => {
    await runCli(['cluster', 'down', '--dir', dir]);
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }, 60_000);

  it('a node cut off by the cut proxy is down at the start: the proxy accepts, but the node never answers', async () => {
    const proxy = new LocalChaos(dir).cutProxy();
    if (!proxy) throw new Error('the cluster has no cut proxy');
    await proxy.cut(VICTIM, 120_000);
    try {
      const bench = await runCli([...workload, '--cluster-dir', dir]);
      expect([0, 1], bench.stderr).toContain(bench.code);
      const report = JSON.parse(bench.stdout) as BenchJson;
      expect(report.downAtStart?.map((d) => d.name)).toEqual([VICTIM]);
      expect(report.downAtStart?.[0]?.reason).toMatch(/did not answer within/);
      expect(report.downAtStart?.[0]?.clients).toBe(4);
      expect(report.failures).toBe(0);
      expect(report.acquires).toBeGreaterThan(0);
    } finally {
      await proxy.heal(VICTIM);
    }
  }, 90_000);

  it('by address: a dead compute node is down at the start, named by its address, and the run goes on', async () => {
    expect((await runCli(['chaos', 'kill', VICTIM, '--dir', dir])).code).toBe(0);
    const victim = state.processes.find((p) => p.name === VICTIM)!;
    const bench = await runCli([...workload, ...remote], tls());
    expect([0, 1], bench.stderr).toContain(bench.code);
    const report = JSON.parse(bench.stdout) as BenchJson;
    expect(report.downAtStart?.map((d) => d.name)).toEqual([`compute@127.0.0.1:${victim.grpc}`]);
    expect(report.downAtStart?.[0]?.clients).toBe(4);
    expect(report.downAtStart?.[0]?.reason).toMatch(/refused|did not answer|closed/);
    expect(report.failures).toBe(0);
    expect(report.nodeFailures ?? []).toEqual([]);
    expect(report.acquires).toBeGreaterThan(0);
  }, 90_000);

  it('mutant (strict discovery): the same dead node fails the whole run with exit 4', async () => {
    const victim = state.processes.find((p) => p.name === VICTIM)!;
    const bench = await runCli([...workload, ...remote, '--mutant-strict-discovery'], tls());
    expect(bench.code, bench.stderr).toBe(4);
    expect(bench.stderr).toContain(`compute node 127.0.0.1:${victim.grpc} did not answer Describe`);
  }, 90_000);

  it('by address: exits 4 within seconds, naming it, when a memory node does not answer', async () => {
    const closed = state.processes.find((p) => p.name === VICTIM)!.grpc;
    const args = [...remote];
    args[args.indexOf('--memory-nodes-at') + 1] = `127.0.0.1:${closed}`;
    const bench = await runCli([...workload, ...args], tls());
    expect(bench.code, bench.stderr).toBe(4);
    expect(bench.stderr).toMatch(new RegExp(`memory node down at the start of the run \\(memory@127\\.0\\.0\\.1:${closed}`));
  }, 60_000);

  it('a memory node killed behind the cut proxy is down at the start: the relay closes, the node does not answer', async () => {
    expect((await runCli(['chaos', 'kill', 'memory-0', '--dir', dir])).code).toBe(0);
    const bench = await runCli([...workload, '--cluster-dir', dir]);
    expect(bench.code, bench.stderr).toBe(4);
    expect(bench.stderr).toMatch(/memory node down at the start of the run \(memory-0: .*closed without answering/);
  }, 60_000);
});
