import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
type Kind = 'acquire-exclusive' | 'acquire-shared' | 'release';
interface BenchJson {
  readonly violations: number;
  readonly livenessViolations: number;
  readonly acquires: number;
  readonly failures: number;
  readonly failuresByCode: Readonly<Record<string, number>>;
  readonly verbsPerAcquire: { readonly total: number };
  readonly verbsPerCs?: { readonly read: number; readonly write: number; readonly total: number };
  readonly placement?: { readonly local: PlacementJson; readonly remote: PlacementJson };
  readonly phasesUs?: Partial<Record<Kind, { readonly operations: number; readonly us: Readonly<Record<string, number>> }>>;
  readonly resets?: { readonly count: number; readonly finishedElsewhere: number };
  readonly releases: number;
  readonly elapsedMs: number;
  readonly verbsPerRelease: { readonly total: number };
  readonly nicIops?: Readonly<Record<string, number>>;
  readonly nicUtilisation?: Readonly<Record<string, number>>;
}
interface HistoryLine {
  readonly client: string;
  readonly op: 'acquire' | 'release';
  readonly phase: 'invoke' | 'ok' | 'fail';
  readonly timeNs: number;
}

/** Summed µs of every completed acquire in a history file (invoke to ok). */
function acquireUsInHistory(file: string): { operations: number; us: number } {
  const invoked = new Map<string, number>();
  let operations = 0;
  let ns = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as HistoryLine;
    if (e.op !== 'acquire') continue;
    if (e.phase === 'invoke') invoked.set(e.client, e.timeNs);
    else if (e.phase === 'ok') {
      operations++;
      ns += e.timeNs - invoked.get(e.client)!;
    }
  }
  return { operations, us: ns / 1000 };
}

const IOPS_CAP = 1_000_000;

describe('lockfabric bench --substrate live: knobs', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    // a cap far above what the runs reach: it never throttles, but the report gives its share
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false, memoryIopsCap: IOPS_CAP });
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
    const args = ['--protocol', 'alock', '--clients', '4', '--colocated-clients', '2', '--locks', '4', '--operations', '120'];
    const run = await bench(args);
    expect(run.violations).toBe(0);
    expect(run.livenessViolations).toBe(0);
    const { local, remote } = run.placement!;
    expect([local.clients, remote.clients]).toEqual([2, 2]);
    expect(local.acquires).toBe(60);
    expect(local.verbs).toEqual({});
    expect(remote.verbsPerAcquire).toBeGreaterThanOrEqual(1);
    // the mutant: the memory node's clients see their table as remote and post verbs through the loopback
    const mutant = await bench([...args, '--mutant-local-verbs']);
    expect(mutant.violations).toBe(0);
    expect(mutant.placement!.local.acquires).toBe(60);
    expect(mutant.placement!.local.verbsPerAcquire).toBeGreaterThanOrEqual(1);
  }, 120_000);

  // One DSLR run for three figures the compute nodes now report: the critical section's data verbs
  // (DecLock Figs. 12–13), the phase breakdown (ShiftLock Tables 3–4) and the counter resets that a
  // small COUNT_MAX makes frequent (DSLR §4, DecLock Fig. 16).
  it('dslr --cs-verbs 2 with a small counter limit: data verbs counted per operation, phases within the acquires, resets reported', async () => {
    const history = join(cluster.dir, 'dslr-history.jsonl');
    const run = await bench(['--protocol', 'dslr', '--clients', '4', '--locks', '4', '--read-ratio', '0.3', '--operations', '200', '--cs-verbs', '2', '--cs-verb-size', '128', '--opt', 'counterLimit=32', '--history', history]);
    expect(run.violations).toBe(0);
    expect(run.failures).toBe(0);
    // every critical section issued exactly its two data verbs: READs when shared, WRITEs when exclusive
    expect(run.verbsPerCs?.total).toBe(2);
    expect(run.verbsPerCs?.read).toBeGreaterThan(0);
    expect(run.verbsPerCs?.write).toBeGreaterThan(0);
    // the phases partition each acquire: their sum is within the acquires' time in the history
    const phases = run.phasesUs!;
    const timed = (['acquire-exclusive', 'acquire-shared'] as const).reduce((sum, kind) => {
      const k = phases[kind];
      return k ? sum + k.operations * Object.values(k.us).reduce((a, b) => a + b, 0) : sum;
    }, 0);
    const fromHistory = acquireUsInHistory(history);
    expect((phases['acquire-exclusive']?.operations ?? 0) + (phases['acquire-shared']?.operations ?? 0)).toBe(fromHistory.operations);
    expect(phases['acquire-exclusive']?.us['initial-atomic']).toBeGreaterThan(0);
    // (both sides are whole ns per operation on the wire: allow 2 ns of rounding per acquire)
    expect(timed).toBeLessThanOrEqual(fromHistory.us + fromHistory.operations * 0.002);
    expect(timed).toBeGreaterThan(fromHistory.us * 0.5);
    // 200 acquires over 4 locks pass COUNT_MAX = 32 on every lock at least once
    expect(run.resets!.count).toBeGreaterThanOrEqual(1);
    // the memory node's NIC served exactly the verbs the clients counted (lock and data verbs alike)
    const clientVerbs = (run.verbsPerAcquire.total + run.verbsPerCs!.total) * run.acquires + run.verbsPerRelease.total * run.releases;
    const served = run.nicIops!['memory-0']! * (run.elapsedMs / 1000);
    expect(Math.round(served)).toBe(Math.round(clientVerbs));
    expect(run.nicUtilisation!['memory-0']).toBeCloseTo(run.nicIops!['memory-0']! / IOPS_CAP, 9);
  }, 120_000);

  // ShiftLock Fig. 13: a client that skips a release carries on; ShiftLock recovers the lock.
  it('shiftlock --skip-release-probability 0.1: releases are skipped (typed), every acquire still completes, exclusion holds', async () => {
    const run = await bench(['--protocol', 'shiftlock', '--clients', '4', '--locks', '4', '--operations', '80', '--skip-release-probability', '0.1']);
    expect(run.violations).toBe(0);
    expect(run.livenessViolations).toBe(0);
    expect(run.acquires).toBe(80);
    expect(run.failuresByCode['RELEASE_SKIPPED']).toBeGreaterThanOrEqual(1);
    expect(Object.keys(run.failuresByCode)).toEqual(['RELEASE_SKIPPED']);
  }, 120_000);
});
