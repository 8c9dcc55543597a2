import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { ProcessStartError } from './errors.js';

/** What readiness checks need of a recorded process. */
export interface ProcessUnderWatch {
  readonly name: string;
  readonly pid: number;
  readonly log: string;
  readonly health?: number | undefined;
}

/** Whether `pid` exists (a zombie included: see {@link isRunning}). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A killed child of a live parent stays a zombie until reaped; it is gone for every purpose here. */
export function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Alive and not a zombie: the process can still act. */
export function isRunning(pid: number): boolean {
  return isAlive(pid) && !isZombie(pid);
}

/** Starts `argv` detached with stdout and stderr appended to `log`; its pid. */
export function spawnLogged(argv: readonly string[], log: string, env: Readonly<Record<string, string>> = {}): number {
  const fd = openSync(log, 'a');
  try {
    const [command, ...args] = argv;
    if (!command) throw new ProcessStartError(log, `no command line to start for ${log}`);
    const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
    child.unref();
    if (child.pid === undefined) throw new ProcessStartError(command, `could not start ${command}`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** Waits for the service's /readyz; fails as soon as the process is gone (its log tail says why). */
export async function waitForHealth(record: ProcessUnderWatch, timeoutMs: number, during = 'start'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(record.pid)) throw new ProcessStartError(record.name, `${record.name} exited during ${during}; see ${record.log}:\n${tail(record.log)}`);
    const ready = await fetch(`http://127.0.0.1:${record.health}/readyz`, { signal: AbortSignal.timeout(1_000) })
      .then((r) => r.ok)
      .catch(() => false);
    if (ready) return;
    await sleep(100);
  }
  throw new ProcessStartError(record.name, `${record.name} was not ready within ${timeoutMs} ms of its ${during}; see ${record.log}:\n${tail(record.log)}`);
}

export function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
