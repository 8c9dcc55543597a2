import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// `lockfabric nemesis` as a user runs it, against a local cluster with the cut proxy: a seeded
// schedule of kills, pauses and partitions over a minute of caslock, then healing, a liveness
// probe, the verdict and the report files. A mutant that breaks exclusion must come out exit 1.
const MISSES = 10;


interface NemesisJson {
  readonly schedule: readonly { id: string; kind: string; target: string; atMs: number; durationMs: number }[];
  readonly faults: readonly { id: string; kind: string; target: string; startNs: number; endNs: number; error?: string; recoveryMs?: number }[];
  readonly verdict: { safety: string; liveness: string; exitCode: number; lines: string[] };
  readonly run: { acquires: number; violations: number };
  readonly heal: { problems: string[]; locksGranted: number; locksProbed: number };
  readonly files: readonly string[];
}

describe('lockfabric nemesis against a local cluster', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 3, withCutProxy: true, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('kill, pause and partition over 60 s of caslock: safe, live after healing, every fault window in the report', async () => {
    const reportDir = join(cluster.dir, 'nemesis-caslock');
    const args = ['nemesis', '--cluster-dir', cluster.dir, '--protocol', 'caslock', '--clients', '8', '--locks', '8', '--duration-ms', '60000', '--faults', 'kill,pause,partition', '--interval-ms', '5000', '--fault-duration-ms', '3000', '--seed', '1', '--report', reportDir, '--json'];
    const planned = await runCli([...args, '--dry-run']);
    expect(planned.code, planned.stderr).toBe(0);
    const schedule = (JSON.parse(planned.stdout) as Pick<NemesisJson, 'schedule'>).schedule;
    expect(new Set(schedule.map((f) => f.kind))).toStrictEqual(new Set(['kill', 'pause', 'partition']));

    const { code, stdout, stderr } = await runCli(args);
    expect(code, stderr.slice(-3_000)).toBe(0);
    const report = JSON.parse(stdout) as NemesisJson;
    expect(report.schedule).toStrictEqual(schedule); // the same seed, the same schedule
    expect(report.verdict).toMatchObject({ safety: 'ok', liveness: 'ok', exitCode: 0 });
    expect(report.run.acquires).toBeGreaterThan(0);
    expect(report.faults.map((f) => f.id)).toStrictEqual(schedule.map((f) => f.id));
    expect(report.faults.filter((f) => f.error)).toStrictEqual([]);
    for (const f of report.faults) expect(f.endNs).toBeGreaterThan(f.startNs);
    // Every kill has a recovery time: survivors back at half their own pre-fault pace and every
    // lock the victim touched granted again (docs/fault-testing.md), not "not seen".
    const kills = report.faults.filter((f) => f.kind === 'kill');
    expect(kills.length).toBeGreaterThan(0);
    for (const f of kills) expect(f.recoveryMs, f.id).toBeGreaterThanOrEqual(0);
    expect(report.heal.problems).toStrictEqual([]);
    expect(report.heal.locksGranted).toBe(report.heal.locksProbed);

    // The files: the HTML report, its JSON (every fault window), the SVGs and the history.
    for (const file of report.files) expect(existsSync(file), file).toBe(true);
    const saved = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as { faults: { id: string; startNs: number; endNs: number }[]; buckets: unknown[] };
    expect(saved.faults.map((f) => f.id)).toStrictEqual(schedule.map((f) => f.id));
    expect(saved.buckets.length).toBeGreaterThan(100);
    const html = readFileSync(join(reportDir, 'report.html'), 'utf8');
    for (const f of schedule) expect(html).toContain(f.target);
    console.log(`nemesis caslock seed 1:\n${report.verdict.lines.join('\n')}\n${report.faults.map((f) => `${f.id} ${f.kind} ${f.target} recovery ${f.recoveryMs?.toFixed(0) ?? '–'} ms`).join('\n')}`);
  }, 240_000);

  // Eight clients on two locks that never compare overlap within milliseconds: the shortest run that
  // still holds one kill (at +1 s for 1.2 s with seed 2) between its quiet stretches is enough.
  it('a mutant that breaks exclusion is caught: exit 1', async () => {
    const { code, stdout, stderr } = await runCli(['nemesis', '--cluster-dir', cluster.dir, '--protocol', 'caslock', '--opt', 'mutantSkipCompare=true', '--clients', '8', '--locks', '2', '--duration-ms', '5000', '--quiet-ms', '1000', '--fault-duration-ms', '1000', '--faults', 'kill', '--seed', '2', '--report', join(cluster.dir, 'nemesis-mutant'), '--json']);
    expect(code, stderr.slice(-2_000)).toBe(1);
    const report = JSON.parse(stdout) as NemesisJson;
    expect(report.schedule.map((f) => f.kind)).toStrictEqual(['kill']);
    expect(report.verdict.safety).toBe('violation');
    expect(report.run.violations).toBeGreaterThan(0);
  }, 120_000);
});
