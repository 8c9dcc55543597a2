import { spawn } from 'node:child_process';
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
