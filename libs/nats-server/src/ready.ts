import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { NatsServerStartError } from './errors.js';

/**
 * Whether nats-server's own output says it listens on `port` and is ready. A TCP connect to the
 * port is not proof: when the port was taken between probing and binding, our server exits and
 * the connect reaches the other process's server (whose subjects a cluster would then share).
 */
export function reportsReady(output: string, port: number): boolean {
  return output.includes(`Listening for client connections on 127.0.0.1:${port}`) && output.includes('Server is ready');
}

export interface NatsReadyWait {
  readonly pid: number;
  readonly port: number;
  /** The file the server's stderr goes to. */
  readonly log: string;
  /** Only log text from this byte on counts (the log is appended to across restarts). */
  readonly fromByte: number;
  readonly timeoutMs: number;
  readonly isAlive: (pid: number) => boolean;
}

/** The log's size now: pass it as `fromByte` before spawning a server that appends to it. */
export function logSize(log: string): number {
  try {
    return statSync(log).size;
  } catch {
    return 0;
  }
}

/**
 * Waits until the nats-server with `pid`, writing to `log`, reports listening on `port`. Throws
 * {@link NatsServerStartError} (`exited` true when the process is gone) otherwise.
 */
export async function waitForNatsReady(wait: NatsReadyWait): Promise<void> {
  const deadline = performance.now() + wait.timeoutMs;
  for (;;) {
    const text = readFrom(wait.log, wait.fromByte);
    if (reportsReady(text, wait.port)) return;
    if (!wait.isAlive(wait.pid)) throw new NatsServerStartError(`nats-server (pid ${wait.pid}) exited before listening on port ${wait.port}`, lastLines(text), true);
    if (performance.now() > deadline) throw new NatsServerStartError(`nats-server (pid ${wait.pid}) did not report listening on port ${wait.port} within ${wait.timeoutMs} ms`, lastLines(text), false);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function readFrom(path: string, fromByte: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = statSync(path).size;
    const length = Math.max(0, Math.min(size - fromByte, 256 * 1024));
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, fromByte);
    return buffer.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The last lines of a log, for an error message. */
export function lastLines(text: string, lines = 4): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}
