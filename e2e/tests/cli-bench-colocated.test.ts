import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// ALock's claim (ALock §1, §3): a client beside the lock table takes the lock with the CPU and
// issues no verbs, and the share of verbs falls as the local fraction grows. From the command a
// user types, on sim.

interface BenchJson {
  readonly violations: number;
  readonly verbsPerAcquire: { readonly total: number };
  readonly verbsPerRelease: { readonly total: number };
}

async function bench(colocated: number): Promise<BenchJson> {
  const { code, stdout, stderr } = await runCli(['bench', '--protocol', 'alock', '--clients', '4', '--locks', '8', '--operations', '2000', '--colocated-clients', String(colocated), '--json']);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as BenchJson;
}

describe('lockfabric bench --colocated-clients (ALock local cohort)', () => {
  it('local acquires and releases issue zero verbs; mixed runs issue fewer than all-remote ones', async () => {
    const remote = await bench(0);
    const mixed = await bench(2);
    const local = await bench(4);
    for (const r of [remote, mixed, local]) expect(r.violations).toBe(0);
    expect(local.verbsPerAcquire.total).toBe(0);
    expect(local.verbsPerRelease.total).toBe(0);
    expect(remote.verbsPerAcquire.total).toBeGreaterThan(0);
    expect(mixed.verbsPerAcquire.total).toBeLessThan(remote.verbsPerAcquire.total);
  }, 60_000);

  it('live with a switch protocol, more colocated clients than clients, the mutant on sim: exit 2 with every problem listed', async () => {
    const { code, stderr } = await runCli(['bench', '--substrate', 'live', '--protocol', 'fisslock', '--clients', '2', '--colocated-clients', '3']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/fisslock needs a switch or a compute-node service/);
    expect(stderr).toMatch(/3 is more than --clients 2/);
    const sim = await runCli(['bench', '--protocol', 'alock', '--colocated-clients', '1', '--mutant-local-verbs']);
    expect(sim.code).toBe(2);
    expect(sim.stderr).toMatch(/--mutant-local-verbs: give --substrate live and --colocated-clients N/);
  });
});
