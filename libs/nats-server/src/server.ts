import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { findNatsServer } from './binary.js';
import { NatsServerStartError } from './errors.js';
import { logSize, reportsReady, waitForNatsReady } from './ready.js';

export interface NatsServerOptions {
  /** Port to listen on (on 127.0.0.1); a free one when omitted, retried on another if it is taken meanwhile. */
  readonly port?: number;
  /** Binary to run; otherwise {@link findNatsServer}'s search. */
  readonly binary?: string;
  /** Extra command-line arguments (e.g. `['-c', 'nats.conf']`). */
  readonly args?: readonly string[];
  /** How long the server may take to report listening. Default 10 s. */
  readonly startTimeoutMs?: number;
  /**
   * Detached: the server's output is appended to this file and it outlives this process (a local
   * cluster's server, stopped by `cluster down`). Without it the server is this process's child,
   * killed when this process exits (tests, one command's server).
   */
  readonly log?: string;
  /** Picks a port to try when `port` is omitted; default: one the OS hands out. */
  readonly freePort?: () => Promise<number>;
  /** Start attempts when `port` is omitted. Default 3. */
  readonly attempts?: number;
}

export interface NatsServerHandle {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** The command line it was started with (a restart runs it again). */
  readonly argv: readonly string[];
  /** Stops the server (SIGTERM, then SIGKILL after a grace period); resolves once it has exited. */
  stop(): Promise<void>;
  /** Kills the server at once, as a crash would (SIGKILL); resolves once it has exited. */
  kill(): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 10_000;
const LOG_TAIL_CHARS = 4_000;
const STOP_GRACE_MS = 3_000;

/** Attached children still running, killed when this process exits so none is left behind. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** A port the OS handed out a moment ago (another process may still take it; the start retries). */
function osFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new NatsServerStartError('no port from a throwaway listener', '', false))));
    });
  });
}

/**
 * The one way LockFabric starts nats-server (tests, `lockfabric transport`, `cluster up`): on
 * 127.0.0.1, ready when the server itself reports listening on its port (see reportsReady). When
 * no port is given and the chosen one is taken before the server binds it, it tries another.
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const binary = findNatsServer(options.binary);
  const attempts = options.port === undefined ? (options.attempts ?? 3) : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await (options.freePort ?? osFreePort)());
    const argv = [binary, '-a', '127.0.0.1', '-p', String(port), ...(options.args ?? [])];
    try {
      return options.log === undefined ? await startAttached(argv, port, options) : await startDetached(argv, port, options.log, options);
    } catch (error) {
      lastError = error;
      // Only a server that exited (its port taken, most often) is worth another port.
      if (!(error instanceof NatsServerStartError) || !error.exited) break;
    }
  }
  throw lastError;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function startAttached(argv: readonly string[], port: number, options: NatsServerOptions): Promise<NatsServerHandle> {
  installExitHook();
  const [binary, ...args] = argv as [string, ...string[]];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  let ready = false;
  const capture = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
    ready ||= reportsReady(output, port);
  };
  // Kept draining after the start too, or a chatty server would block on a full pipe.
  child.stdout?.on('data', capture);
  child.stderr?.on('data', capture);
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  child.once('exit', () => running.delete(child));
  const deadline = performance.now() + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  while (!ready) {
    if (spawnError) throw new NatsServerStartError(`could not run ${binary}: ${spawnError.message}`, output, true);
    if (child.exitCode !== null || child.signalCode !== null) throw new NatsServerStartError(`nats-server on port ${port} exited during start (${child.exitCode ?? child.signalCode})`, output, true);
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      await exited(child);
      throw new NatsServerStartError(`nats-server on port ${port} did not report listening in time`, output, false);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    argv,
    async stop() {
      if (gone()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited(child);
      clearTimeout(timer);
    },
    async kill() {
      if (gone()) return;
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}

/** Whether `pid` can still act: it exists and is not a zombie waiting to be reaped. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function startDetached(argv: readonly string[], port: number, log: string, options: NatsServerOptions): Promise<NatsServerHandle> {
  const [binary, ...args] = argv as [string, ...string[]];
  const fromByte = logSize(log);
  const fd = openSync(log, 'a');
  let pid: number | undefined;
  try {
    const child = spawn(binary, args, { detached: true, stdio: ['ignore', fd, fd] });
    child.once('error', () => undefined);
    child.unref();
    pid = child.pid;
  } finally {
    closeSync(fd);
  }
  if (pid === undefined) throw new NatsServerStartError(`could not run ${binary}`, '', true);
  const serverPid = pid;
  try {
    await waitForNatsReady({ pid: serverPid, port, log, fromByte, timeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS, isAlive: isRunning });
  } catch (error) {
    signal(serverPid, 'SIGKILL');
    throw error;
  }
  const waitGone = async (graceMs: number) => {
    const deadline = performance.now() + graceMs;
    while (isRunning(serverPid) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    if (isRunning(serverPid)) signal(serverPid, 'SIGKILL');
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: serverPid,
    argv,
    async stop() {
      signal(serverPid, 'SIGTERM');
      await waitGone(STOP_GRACE_MS);
    },
    async kill() {
      signal(serverPid, 'SIGKILL');
      await waitGone(STOP_GRACE_MS);
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

