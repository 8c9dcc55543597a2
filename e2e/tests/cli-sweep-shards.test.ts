import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// `lockfabric sweep`: shards run as separate OS processes (as the pods of an Indexed Job would),
// and their merge must be the result of one `check --swarm --workers 1` over the same seeds.

const dir = mkdtempSync(join(tmpdir(), 'lockfabric-sweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sweep run + merge', () => {
  it('three shard processes merged give the per-protocol digests and failures of one run', async () => {
    // A planted caslock mutant, so the comparison covers failures as well as passing seeds.
    const plan = ['--protocol', 'caslock', '--opt', 'mutantSkipCompare=true', '--seeds', '5', '--first-seed', '1'];
    const [single, ...shards] = await Promise.all([
      runCli(['check', '--swarm', ...plan, '--workers', '1', '--json']),
      runCli(['sweep', 'run', ...plan, '--shards', '3', '--index', '0', '--out', dir]),
      // Inside a Kubernetes Indexed Job the index comes from the environment.
      runCli(['sweep', 'run', ...plan, '--shards', '3', '--out', dir], { ...process.env, JOB_COMPLETION_INDEX: '1' }),
      runCli(['sweep', 'run', ...plan, '--shards', '3', '--index', '2', '--out', dir]),
    ]);
    expect(single!.code, single!.stderr).toBe(1);
    for (const shard of shards) expect([0, 1], shard.stderr).toContain(shard.code);
    expect(readdirSync(dir).sort()).toStrictEqual(['shard-0000-of-3.json', 'shard-0001-of-3.json', 'shard-0002-of-3.json']);
    const merged = await runCli(['sweep', 'merge', dir, '--json']);
    expect(merged.code, merged.stderr).toBe(1);
    const a = JSON.parse(single!.stdout) as { protocols: unknown[]; failures: unknown[] };
    const b = JSON.parse(merged.stdout) as { protocols: unknown[]; failures: unknown[] };
    expect(a.failures.length).toBeGreaterThan(0);
    expect(b.protocols).toStrictEqual(a.protocols);
    expect(b.failures).toStrictEqual(a.failures);
  }, 120_000);

  it('a merge with a shard missing is a configuration error naming it (exit 2)', async () => {
    rmSync(join(dir, 'shard-0001-of-3.json'));
    const { code, stderr } = await runCli(['sweep', 'merge', dir]);
    expect(code).toBe(2);
    expect(stderr).toContain('shard 1 of 3 is missing (shard-0001-of-3.json)');
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
