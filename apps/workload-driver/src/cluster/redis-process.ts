import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { freePort } from './local-cluster.js';
import { isRunning, sleep, spawnLogged } from './process-control.js';
import { MissingToolError, ProcessStartError } from './errors.js';

const START_ATTEMPTS = 3;
const START_TIMEOUT_MS = 10_000;
const READY_LINE = 'Ready to accept connections';

/** The redis-server binary (Debian package redis-server), or undefined. */
export function findRedisServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const candidate of ['/usr/bin/redis-server', ...(env['PATH'] ?? '').split(delimiter).filter(Boolean).map((d) => join(d, 'redis-server'))]) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next candidate
    }
  }
  return undefined;
}

/**
 * A throwaway in-memory Redis: loopback only, no snapshots or AOF (balances are rebuilt by every
 * SmallBank run), logging to stdout so readiness is read from the server's own words.
 */
export function redisArgs(port: number): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', ''];
}

function notInstalled(): MissingToolError {
  return new MissingToolError('redis-server', 'redis-server is not installed (apt-get install redis-server); or pass --redis URL');
}

/**
 * The cluster's redis-server (`cluster up`): a detached process logging to `redis.log` in the
 * cluster directory, stopped by `cluster down` with the other processes. Like nats-server, a
 * port taken between probing and binding makes it exit, and another port is tried.
 */
export async function startClusterRedis(dir: string): Promise<{ url: string; pid: number; log: string; argv: string[] }> {
  const binary = findRedisServer();
  if (!binary) throw notInstalled();
  const log = join(dir, 'redis.log');
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const argv = [binary, ...redisArgs(port)];
    const from = logText(log).length;
    const pid = spawnLogged(argv, log, {});
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (isRunning(pid) && !logText(log).slice(from).includes(READY_LINE) && Date.now() < deadline) await sleep(20);
    if (logText(log).slice(from).includes(READY_LINE) && isRunning(pid)) return { url: `redis://127.0.0.1:${port}`, pid, log, argv };
    if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
  throw new ProcessStartError('redis-server', `redis-server did not start after ${START_ATTEMPTS} attempts (see ${log})`);
}

function logText(log: string): string {
  try {
    return readFileSync(log, 'utf8');
  } catch {
    return '';
  }
}

/** A redis-server owned by one command (a bench without a cluster Redis), stopped with it. */
export async function startRedisForCommand(): Promise<{ url: string; stop(): Promise<void> }> {
  const binary = findRedisServer();
  if (!binary) throw notInstalled();
  let lastError = '';
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const child = spawn(binary, redisArgs(port), { stdio: ['ignore', 'pipe', 'ignore'] });
    const stopOnExit = () => child.kill('SIGKILL');
    process.once('exit', stopOnExit);
    const started = await new Promise<boolean>((resolve) => {
      let output = '';
      const timer = setTimeout(() => resolve(false), START_TIMEOUT_MS);
      child.stdout?.on('data', (chunk: Buffer) => {
        output = (output + chunk.toString('utf8')).slice(-8_192);
        if (output.includes(READY_LINE)) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        lastError = output.trim().split('\n').slice(-2).join(' | ');
        resolve(false);
      });
    });
    if (started) {
      child.stdout?.resume();
      return {
        url: `redis://127.0.0.1:${port}`,
        stop: async () => {
          process.removeListener('exit', stopOnExit);
          if (child.exitCode !== null) return;
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
    process.removeListener('exit', stopOnExit);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  throw new ProcessStartError('redis-server', `redis-server did not start after ${START_ATTEMPTS} attempts${lastError ? `: ${lastError}` : ''}`);
}
