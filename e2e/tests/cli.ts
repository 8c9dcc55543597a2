import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `lockfabric` command as a user runs it (the built bin). */
export const CLI = fileURLToPath(new URL('../../apps/workload-driver/bin/lockfabric.js', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `lockfabric ARGS` in its own process and collects its output and exit code. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env, ...(cwd ? { cwd } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** What a `lockfabric` run loaded: each specifier it resolved and the URL that became. */
export interface RecordedImports extends CliResult {
  readonly specifiers: readonly string[];
  readonly urls: readonly string[];
}

/** Runs `lockfabric ARGS` with a resolve hook (fixtures/record-imports.mjs) that records every module it loads. */
export async function runCliRecordingImports(args: readonly string[]): Promise<RecordedImports> {
  const file = join(mkdtempSync(join(tmpdir(), 'lf-imports-')), 'imports.txt');
  const hook = fileURLToPath(new URL('./fixtures/record-imports.mjs', import.meta.url));
  const result = await runCli(args, { ...process.env, NODE_OPTIONS: `--import=${hook}`, LOCKFABRIC_RECORD_IMPORTS: file });
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line.length > 0).map((line) => line.split('\t'));
  return { ...result, specifiers: lines.map(([specifier]) => specifier as string), urls: lines.map(([, url]) => url ?? '') };
}

/** The npm packages among loaded URLs, by name (`@grpc/grpc-js`, `vega`), each once. */
export function loadedPackages(urls: readonly string[]): string[] {
  const names = urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url.slice(url.lastIndexOf('/node_modules/')))?.[1]).filter((name): name is string => name !== undefined);
  return [...new Set(names)];
}
