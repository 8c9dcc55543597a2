import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HistoryEvent } from '@lockfabric/check';
import { LocalChaos } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { metric, nodeOf, sleep, switchOpened, waitFor } from './live-chaos-support.js';

// A user's fault test, through the command they type: `lockfabric bench --substrate live` runs
// against `cluster up`, and a compute node is SIGKILLed in the middle. The command must finish
// with the survivors' figures, the failure, the unknown operations and the recovery in its JSON,
// exit by the checker's verdict, and write a history that holds the victim's operations up to its
// death (the compute nodes stream their history during the run).
const CLI = fileURLToPath(new URL('../../apps/workload-driver/bin/lockfabric.js', import.meta.url));
const VICTIM = 3;
/** Heartbeats every 100 ms; 10 misses, as `cluster up` sets for interactive clusters. */
const MISSES = 10;

interface Case {
  readonly protocol: string;
  readonly family: string;
  readonly opts: readonly string[];
}

const cases: Case[] = [
  { protocol: 'caslock', family: 'RDMA spin lock', opts: [] },
  { protocol: 'declock', family: 'RDMA queue/handover lock', opts: [] },
  { protocol: 'srvlock', family: 'switch-routed lock server', opts: ['--opt', 'retransmitNs=20000000', '--opt', 'maxAttempts=25'] },
];

interface BenchJson {
  readonly protocol: string;
  readonly throughput: number;
  readonly acquires: number;
  readonly failuresByCode: Record<string, number>;
  readonly violations: number;
  readonly unknownOps?: number;
  readonly nodeFailures?: readonly { node: number; name: string; failedAtMs: number; historyEvents: number; unknownOps: number; affectedLocks: number; recoveredLocks: number; unrecoveredLocks: number[]; recoveryMs?: number }[];
}

function runCli(args: readonly string[]): { exit: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return { exit: new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))) };
}

describe('lockfabric bench --substrate live survives a compute node SIGKILLed mid-run', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  const figures: string[] = [];

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: true, switchProgram: 'forward', computeNodes: 3, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
  }, 120_000);
  afterAll(async () => {
    if (figures.length > 0) console.log(`bench with compute-${VICTIM} killed:\n${figures.join('\n')}`);
    await cluster?.stop();
  });

  it.each(cases)('$protocol ($family): exit by the verdict, survivors’ figures, the failure and the victim’s history up to its death', async ({ protocol, opts }) => {
    const chaos = new LocalChaos(cluster.dir);
    const memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    // The previous case's victim was restarted: wait until the memory node admits it again.
    await waitFor(async () => (await metric(memory, 'lockfabric_memory_fenced_nodes')) === 0, 20_000, 'the memory node admits the last victim again');
    await switchOpened(cluster.state);
    const historyFile = join(cluster.dir, `${protocol}-history.jsonl`);
    // No warm-up: the victim is killed once its operations move, which must be the measured run's.
    const bench = runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--protocol', protocol, '--clients', '9', '--locks', '6', '--duration-ms', '5000', '--think-ns', '1000000', '--cs-ns', '2000000', '--timeout-ms', '1500', '--warmup-ops', '0', ...opts, '--history', historyFile, '--json']);
    // Kill once the victim's clients are working (its operation counter moves), not after a fixed
    // sleep: on a loaded machine the CLI's start and the run's start barrier can outlast any fixed
    // wait, and a node killed before the run is no failure of the run.
    const victim = chaos.process(`compute-${VICTIM}`);
    await waitFor(async () => (await metric(victim, 'lockfabric_lock_operations_total', `protocol="${protocol}"`)) >= 5, 30_000, `compute-${VICTIM}'s first operations`);
    await sleep(500);
    await chaos.kill(`compute-${VICTIM}`);
    const { code, stdout, stderr } = await bench.exit;
    await chaos.restart(`compute-${VICTIM}`);

    expect(code, stderr).toBe(0); // the checker passed (1 would be a violation, 4 an error)
    const report = JSON.parse(stdout) as BenchJson;
    expect(report.violations).toBe(0);
    expect(report.acquires).toBeGreaterThan(0);
    expect(report.throughput).toBeGreaterThan(0);
    expect(typeof report.failuresByCode).toBe('object');
    const failure = report.nodeFailures?.find((f) => f.node === VICTIM);
    expect(failure, JSON.stringify(report.nodeFailures)).toBeDefined();
    expect(report.nodeFailures).toHaveLength(1);
    expect(report.unknownOps).toBe(failure!.unknownOps);
    expect(failure!.historyEvents).toBeGreaterThan(0);
    // Every lock the victim held or waited for, that a survivor wanted afterwards, was granted again.
    expect(failure!.unrecoveredLocks).toStrictEqual([]);
    if (failure!.recoveredLocks > 0) expect(failure!.recoveryMs).toBeGreaterThan(0);

    // The history file: the victim's operations up to its death, nothing after.
    const history = readFileSync(historyFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as HistoryEvent);
    const startNs = Math.min(...history.map((e) => e.timeNs));
    const own = history.filter((e) => nodeOf(e) === VICTIM);
    expect(own.length).toBe(failure!.historyEvents);
    expect(own.some((e) => e.op === 'acquire' && e.phase === 'ok')).toBe(true);
    expect(Math.max(...own.map((e) => e.timeNs)) - startNs).toBeLessThanOrEqual(failure!.failedAtMs * 1e6 + 1);
    expect(history.some((e) => nodeOf(e) !== VICTIM && e.op === 'acquire' && e.phase === 'ok' && e.timeNs - startNs > failure!.failedAtMs * 1e6)).toBe(true);
    figures.push(`${protocol}: ${Math.round(report.throughput)} ops/s survivors, failures ${JSON.stringify(report.failuresByCode)}, ${failure!.unknownOps} unknown, ${failure!.historyEvents} victim events kept, ${failure!.recoveredLocks}/${failure!.affectedLocks} locks back${failure!.recoveryMs !== undefined ? ` in ${failure!.recoveryMs.toFixed(0)} ms` : ''}`);
  }, 90_000);
});
