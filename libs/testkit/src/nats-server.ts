import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.js';

export interface NatsServerOptions {
  /** Port to listen on; a free one when omitted. */
  readonly port?: number;
  /** Binary to run; otherwise /usr/sbin/nats-server, then `nats-server` on PATH. */
  readonly binary?: string;
  /** Extra command-line arguments (e.g. `['--max_payload', '2MB']`). */
  readonly args?: readonly string[];
  /** How long the server may take to accept connections. */
  readonly startTimeoutMs?: number;
}

export interface NatsServerHandle {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Stops the server (SIGTERM, then SIGKILL after a grace period); resolves once it has exited. */
  stop(): Promise<void>;
  /** Kills the server at once, as a crash would (SIGKILL); resolves once it has exited. */
  kill(): Promise<void>;
}

/** No nats-server binary could be found; the message says where we looked. */
export class NatsServerNotFoundError extends Error {
  constructor(readonly searched: readonly string[]) {
    super(`nats-server not found (looked at ${searched.join(', ')}); install it (https://nats.io) or pass { binary }`);
    this.name = 'NatsServerNotFoundError';
  }
}

/** The server exited or did not accept connections in time; `output` is the tail of its log. */
export class NatsServerStartError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(output ? `${message}\n--- nats-server output ---\n${output}` : message);
    this.name = 'NatsServerStartError';
  }
}

const DEFAULT_BINARY = '/usr/sbin/nats-server';
const LOG_TAIL_CHARS = 4_000;
const STOP_GRACE_MS = 3_000;

/** Children still running, killed when this process exits so no test leaves a server behind. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of the nats-server to run; throws {@link NatsServerNotFoundError}. */
export function findNatsServer(binary?: string, env: NodeJS.ProcessEnv = process.env): string {
  const searched: string[] = [];
  const candidates = binary ? [binary] : [DEFAULT_BINARY, ...(env['PATH'] ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'nats-server'))];
  for (const candidate of candidates) {
    searched.push(candidate);
    if (isExecutable(candidate)) return candidate;
  }
  throw new NatsServerNotFoundError(binary ? searched : [DEFAULT_BINARY, '`nats-server` on PATH']);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Spawns a nats-server on 127.0.0.1 and resolves once it reports listening on its port. When no port is
 * given and the chosen one is taken in the meantime, it retries on another.
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const binary = findNatsServer(options.binary);
  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await spawnOnce(binary, port, options);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function spawnOnce(binary: string, port: number, options: NatsServerOptions): Promise<NatsServerHandle> {
  installExitHook();
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), ...(options.args ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  let listening = false;
  let ready = false;
  const listeningLine = `Listening for client connections on 127.0.0.1:${port}`;
  const capture = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
    listening ||= output.includes(listeningLine);
    ready ||= listening && output.includes('Server is ready');
  };
  child.stdout?.on('data', capture);
  child.stderr?.on('data', capture);
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  child.once('exit', () => running.delete(child));

  const deadline = performance.now() + (options.startTimeoutMs ?? 10_000);
  for (;;) {
    if (spawnError) throw new NatsServerStartError(`could not run ${binary}: ${spawnError.message}`, output);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new NatsServerStartError(`nats-server on port ${port} exited during start (${child.exitCode ?? child.signalCode})`, output);
    }
    // Its own log, not a TCP connect: if the port was taken meanwhile, a connect reaches the other server.
    if (ready) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      await exited(child);
      throw new NatsServerStartError(`nats-server on port ${port} did not accept connections in time`, output);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const pid = child.pid ?? -1;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited(child);
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}
