import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

  it('bench --help loads its text only: neither gRPC nor the report renderer (Vega)', async () => {
    const record = async (args: readonly string[]) => {
      const file = join(mkdtempSync(join(tmpdir(), 'lf-imports-')), 'imports.txt');
      const hook = fileURLToPath(new URL('./fixtures/record-imports.mjs', import.meta.url));
      const result = await runCli(args, { ...process.env, NODE_OPTIONS: `--import=${hook}`, LOCKFABRIC_RECORD_IMPORTS: file });
      return { code: result.code, specifiers: readFileSync(file, 'utf8').split('\n') };
    };
    const heavy = (specifiers: readonly string[]) => specifiers.filter((s) => /^(@grpc\/grpc-js|vega|vega-lite|@lockfabric\/live|@lockfabric\/report)$/.test(s));
    const help = await record(['bench', '--help']);
    expect(help.code).toBe(0);
    expect(help.specifiers).toContain('@lockfabric/lock-catalog');
    expect(heavy(help.specifiers)).toEqual([]);
    // The recorder can fail: bench proper loads them (here to reject an unknown protocol, exit 2).
    const run = await record(['bench', '--protocol', 'nope']);
    expect(run.code).toBe(2);
    expect(heavy(run.specifiers)).not.toEqual([]);
  });
});
