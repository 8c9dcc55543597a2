import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// `lockfabric nemesis --kube-context` without a Kubernetes cluster: the nodes are a local live
// cluster reached by address (as a Job or a port-forward reaches pods), and `kubectl` is a stand-in
// on PATH that records its arguments. What is checked is the orchestration: the workload runs
// against the addressed nodes, every scheduled fault becomes the kubectl plan for the manifests'
// pods at its time, healing runs, and the verdict and report come out. The faults themselves do
// not happen here; the local-cluster nemesis test covers real kills, pauses and partitions.


describe('lockfabric nemesis --kube-context', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  const bin = mkdtempSync(join(tmpdir(), 'lf-kubectl-'));
  const log = join(bin, 'kubectl.log');

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 1 });
    writeFileSync(join(bin, 'kubectl'), `#!/bin/sh\necho "$*" >> '${log}'\ncase "$*" in *" get pod "*) echo pod/stand-in;; esac\n`);
    chmodSync(join(bin, 'kubectl'), 0o755);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(bin, { recursive: true, force: true });
  });

  it('runs the workload against the addressed nodes and every fault as kubectl on the manifests\' pods', async () => {
    const compute = cluster.state.processes.find((p) => p.role === 'compute')!;
    const memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    const report = join(bin, 'report');
    const { code, stdout, stderr } = await runCli(
      [
        'nemesis', '--kube-context', 'stand-in', '--namespace', 'lf-test',
        '--compute-nodes-at', `127.0.0.1:${compute.grpc}`, '--memory-nodes-at', `127.0.0.1:${memory.grpc}`, '--compute-memory-port', String(compute.memoryGrpc),
        '--protocol', 'caslock', '--clients', '4', '--locks', '8', '--faults', 'coordinator-kill,nats-restart',
        '--duration-ms', '12000', '--interval-ms', '1500', '--fault-duration-ms', '1000', '--quiet-ms', '2500', '--heal-budget-ms', '3000',
        '--seed', '5', '--report', report, '--json',
      ],
      // addressed nodes, no cluster directory: the operator certificate comes from the environment (mutual TLS)
      { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, LOCKFABRIC_TLS_CA: join(cluster.dir, 'tls', 'ca.crt'), LOCKFABRIC_TLS_CERT: join(cluster.dir, 'tls', 'operator.crt'), LOCKFABRIC_TLS_KEY: join(cluster.dir, 'tls', 'operator.key') },
    );
    expect(code, stderr).toBe(0);
    const json = JSON.parse(stdout) as { faults: { kind: string; target: string; error?: string }[]; verdict: { safety: string; liveness: string }; run: { acquires: number }; files: string[] };
    expect(json.verdict).toMatchObject({ safety: 'ok', liveness: 'ok' });
    expect(json.run.acquires).toBeGreaterThan(100);
    expect(json.faults.length).toBeGreaterThan(0);
    for (const f of json.faults) expect(f.error).toBeUndefined();
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    const K = '--context stand-in -n lf-test';
    for (const f of json.faults) {
      if (f.kind === 'coordinator-kill') {
        expect(calls).toContain(`${K} delete pod -l app.kubernetes.io/name=coordinator --grace-period=0 --force --wait=false`);
        expect(calls).toContain(`${K} wait --for=condition=Ready pod -l app.kubernetes.io/name=coordinator --timeout=120s`);
      } else {
        expect(calls).toContain(`${K} delete pod -l app.kubernetes.io/name=nats --wait=true`);
      }
    }
    expect(calls.at(-1)).toBe(`${K} wait --for=condition=Ready pod -l app.kubernetes.io/component=lockfabric-app --timeout=120s`);
    for (const file of json.files) expect(existsSync(file)).toBe(true);
  }, 180_000);
});
