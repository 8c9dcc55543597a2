import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';
import { TestServerError } from './test-server-error.js';

export interface RedisServerHandle {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** SIGTERM; resolves once the server has exited. */
  stop(): Promise<void>;
}

const READY_LINE = 'Ready to accept connections';
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Spawns a real redis-server (`/usr/bin/redis-server` or PATH) on a free loopback port, in memory
 * only, and resolves once it logs that it accepts connections; a port lost to a race is retried.
 */
export async function startRedisServer(options: { binary?: string; startTimeoutMs?: number } = {}): Promise<RedisServerHandle> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await spawnOnce(options.binary ?? 'redis-server', await freePort(), options.startTimeoutMs ?? 10_000);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

function spawnOnce(binary: string, port: number, timeoutMs: number): Promise<RedisServerHandle> {
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--logfile', ''], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new TestServerError(`redis-server on port ${port} did not start in time:\n${output}`))), timeoutMs);
    child.once('error', (error) => (clearTimeout(timer), reject(error)));
    child.once('exit', (code) => (clearTimeout(timer), reject(new TestServerError(`redis-server on port ${port} exited during start (${code}):\n${output}`))));
    child.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4_000);
      if (!output.includes(READY_LINE)) return;
      clearTimeout(timer);
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      child.removeAllListeners('exit');
      child.once('exit', () => running.delete(child));
      resolve({
        url: `redis://127.0.0.1:${port}`,
        port,
        pid: child.pid ?? -1,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}
