import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// The entry point a user meets first: usage, version and unknown commands.
describe('lockfabric entry point', () => {
  it('--help lists every command and exits 0; no command prints it and exits 2', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['demo', 'bench', 'check', 'cluster', 'chaos', 'nemesis', 'reproduce', 'report', 'certs']) expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect((await runCli([])).code).toBe(2);
  });

  it('--version prints the package version', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../../apps/workload-driver/package.json', import.meta.url), 'utf8')) as { version: string };
    const result = await runCli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(`lockfabric ${manifest.version}`);
  });

  it('an unknown command exits 2 naming it, a partial LOCKFABRIC_TLS_* set exits 2 listing the variables', async () => {
    const unknown = await runCli(['benhc']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "benhc"');
    const partial = await runCli(['check', '--protocol', 'caslock', '--seeds', '1'], { ...process.env, LOCKFABRIC_TLS_CA: '/nowhere/ca.pem' });
    expect(partial.code).toBe(2);
    expect(partial.stderr).toContain('LOCKFABRIC_TLS_CERT');
  });
});
