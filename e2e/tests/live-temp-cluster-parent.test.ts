import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning as running } from '@lockfabric/workload-driver';
import { describe, expect, it } from 'vitest';
import { CLI } from './cli.js';

// `bench --substrate live` without a running cluster starts a temporary one and stops it when it
// ends. A test runner that times out SIGKILLs the CLI instead: the temporary cluster (services and
// nats-server) must go with it rather than run on forever.

interface Recorded {
  readonly name: string;
  readonly role: string;
  readonly pid: number;
  readonly health?: number;
}

async function ready(p: Recorded): Promise<boolean> {
  if (p.health === undefined) return running(p.pid);
  return fetch(`http://127.0.0.1:${p.health}/readyz`, { signal: AbortSignal.timeout(1_000) })
    .then((r) => r.ok)
    .catch(() => false);
}

async function pollUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

describe('a temporary live cluster dies with the CLI that started it', () => {
  it('stops every service and nats-server after the CLI is SIGKILLed', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'lf-parent-'));
    const env = { ...process.env };
    delete env['NATS_URL'];
    // Long enough that it is still running when killed; the kill comes once the cluster is ready.
    const cli = spawn(process.execPath, [CLI, 'bench', '--substrate', 'live', '-p', 'caslock', '--clients', '4', '--locks', '10', '--duration-ms', '120000', '--warmup-ops', '0', '--floor-ops', '0'], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<void>((resolve) => cli.once('exit', () => resolve()));
    const state = join(cwd, '.lockfabric', `run-${cli.pid}`, 'cluster.json');
    let processes: Recorded[] = [];
    try {
      processes = await pollUntil(`a ready temporary cluster in ${state}\n${stderr}`, 60_000, async () => {
        if (!existsSync(state)) return undefined;
        let listed: Recorded[];
        try {
          listed = (JSON.parse(readFileSync(state, 'utf8')) as { processes: Recorded[] }).processes;
        } catch {
          return undefined; // being rewritten
        }
        if (!listed.some((p) => p.role === 'coordinator')) return undefined;
        return (await Promise.all(listed.map(ready))).every(Boolean) ? listed : undefined;
      });
      expect(processes.map((p) => p.role)).toEqual(expect.arrayContaining(['nats', 'memory', 'compute', 'switch', 'coordinator']));
      expect(processes.every((p) => running(p.pid))).toBe(true);
      cli.kill('SIGKILL');
      await exited;
      const left = await pollUntil('every process of the temporary cluster to exit', 20_000, async () => {
        const alive = processes.filter((p) => running(p.pid));
        return alive.length === 0 ? alive : undefined;
      }).catch(() => processes.filter((p) => running(p.pid)));
      expect(left.map((p) => `${p.name} (pid ${p.pid})`)).toEqual([]);
    } finally {
      cli.kill('SIGKILL');
      // Never leave a failed run's cluster behind on the machine.
      for (const p of processes) if (running(p.pid)) process.kill(p.pid, 'SIGKILL');
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 90_000);
});
