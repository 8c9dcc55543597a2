import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// The sim cost model from the command a user types (docs/cost-model.md): paper by default,
// ideal on request, a file validated with every problem listed; NIC ceiling use and the
// critical section's data verbs in the report.

interface BenchJson {
  readonly costModel: string;
  readonly violations: number;
  readonly nicUtilisation?: Record<string, number>;
  readonly verbsPerCs?: { readonly total: number; readonly read: number; readonly write: number };
}

const WORKLOAD = ['--protocol', 'caslock', '--clients', '16', '--locks', '100', '--distribution', 'zipf:0.99', '--read-ratio', '0.5', '--operations', '500', '--json'];

async function bench(extra: readonly string[]): Promise<BenchJson> {
  const { code, stdout, stderr } = await runCli(['bench', ...WORKLOAD, ...extra]);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as BenchJson;
}

describe('lockfabric bench --cost-model', () => {
  it('names the model; paper reports the NIC ceiling in use, ideal has none; --cs-verbs adds data verbs', async () => {
    const paper = await bench(['--cs-verbs', '2']);
    const ideal = await bench(['--cost-model', 'ideal']);
    const squeezed = await bench(['--mn-iops', '1000000']);
    expect(paper.costModel).toBe('paper');
    expect(ideal.costModel).toBe('ideal');
    expect(squeezed.costModel).toBe('paper+mn-iops=1000000');
    for (const r of [paper, ideal, squeezed]) expect(r.violations).toBe(0);
    expect(paper.nicUtilisation?.['0']).toBeGreaterThan(0);
    expect(ideal.nicUtilisation).toBeUndefined();
    // a tenth of the paper ceiling: the same load uses a larger share of it
    expect(squeezed.nicUtilisation!['0']!).toBeGreaterThan(paper.nicUtilisation!['0']!);
    expect(paper.verbsPerCs?.total).toBe(2);
    expect(paper.verbsPerCs!.read).toBeGreaterThan(0);
    expect(paper.verbsPerCs!.write).toBeGreaterThan(0);
  }, 120_000);

  it('a bad model file exits 2 listing every problem, without a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cost-model-'));
    const file = join(dir, 'model.json');
    writeFileSync(file, JSON.stringify({ nic: { casNs: -1, atomicIops: 0 }, switchLinks: 'udp', warp: 9 }));
    const { code, stderr } = await runCli(['bench', '--cost-model', file, '--cs-verb-size', '64', '--json']);
    expect(code).toBe(2);
    for (const field of ['nic.casNs', 'nic.atomicIops', 'switchLinks', '"warp"', '--cs-verb-size']) expect(stderr).toContain(field);
    expect(stderr).not.toMatch(/\n\s+at /);
    const check = await runCli(['check', '--cost-model', join(dir, 'missing.json'), '--seeds', '1']);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain('not paper, ideal or a readable file');
  }, 60_000);
});
