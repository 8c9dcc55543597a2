import { describe, expect, it } from 'vitest';
import { runCli, runCliRecordingImports } from './cli.js';

// `bench --workers` and plain `check --workers` spread independent simulations over threads; the
// merged answer must not depend on the thread count.

/** The fields of a bench report that depend on the wall clock or the processor, not on the simulation. */
const MACHINE_FIGURES = ['wallMs', 'cpuMs', 'nicVerbsPerSec', 'nicVerbsPerCpuSec', 'simEventsPerCpuSec'];

function simulated(report: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(report).filter(([key]) => !MACHINE_FIGURES.includes(key)));
}

describe('--workers', () => {
  it('bench: several protocols on 2 workers give the same reports, in the same order, as on 1', async () => {
    const args = ['bench', '--protocol', 'caslock,dslr,shiftlock', '--clients', '16', '--locks', '64', '--operations', '800', '--read-ratio', '0.5', '--json'];
    const one = await runCli([...args, '--workers', '1']);
    const two = await runCli([...args, '--workers', '2']);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    const a = (JSON.parse(one.stdout) as { results: Record<string, unknown>[] }).results;
    const b = (JSON.parse(two.stdout) as { results: Record<string, unknown>[] }).results;
    expect(a.map((r) => r['protocol'])).toEqual(['caslock', 'dslr', 'shiftlock']);
    expect(b.map(simulated)).toEqual(a.map(simulated));
    // Not vacuous: the three runs differ from each other.
    expect(new Set(a.map((r) => r['digest'])).size).toBe(3);
    // bench on sim asks for its processor time (a swarm seed does not).
    for (const r of [...a, ...b]) expect(r['cpuMs'], String(r['protocol'])).toBeGreaterThan(0);
  }, 120_000);

  it('check: a planted mutant fails the same seeds, reported the same way, on 1 and 2 workers', async () => {
    const args = ['check', '--protocol', 'caslock', '--opt', 'mutantSkipCompare=true', '--seeds', '6', '--json'];
    const one = await runCli([...args, '--workers', '1']);
    const two = await runCli([...args, '--workers', '2']);
    expect(one.code).toBe(1);
    expect(two.code).toBe(1);
    const a = JSON.parse(one.stdout) as { failures: unknown[]; violations: number };
    const b = JSON.parse(two.stdout) as { failures: unknown[]; violations: number };
    expect(a.failures.length).toBeGreaterThan(0);
    expect(b.failures).toEqual(a.failures);
    expect(b.violations).toBe(a.violations);
  }, 120_000);

  it('bench --workers on a real-time substrate is a configuration error (exit 2)', async () => {
    const { code, stderr } = await runCli(['bench', '--substrate', 'embedded', '--protocol', 'caslock,dslr', '--workers', '2']);
    expect(code).toBe(2);
    expect(stderr).toContain('--workers: runs several simulations at once, so only with --substrate sim');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('check --swarm --workers 2 starts one worker thread (this thread is the other lane), which loads only the swarm task', async () => {
    const run = await runCliRecordingImports(['check', '--swarm', '--protocol', 'caslock', '--seeds', '4', '--workers', '2', '--json']);
    expect(run.code, run.stderr).toBe(0);
    // Each thread resolves the worker entry when it starts: one resolution, one worker.
    expect(run.urls.filter((url) => url.endsWith('/workers/worker.js'))).toHaveLength(1);
    // `check` itself loads check-seed on this thread; the bench and reproduce tasks are the worker's to skip.
    expect(run.urls.filter((url) => /\/(commands\/bench-in-memory|reproduce\/measure|report\/bench-report)\.js$/.test(url))).toEqual([]);
  }, 120_000);
});
