import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** nats-server exited before it listened: most often its port was taken by another process. */
export class NatsStartError extends Error {
  constructor(
    message: string,
    /** Whether the process is gone (so a retry on another port may succeed). */
    readonly exited: boolean,
  ) {
    super(message);
    this.name = 'NatsStartError';
  }
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
 * Waits until the nats-server with `pid` says, in its own log, that it listens on `port` and is
 * ready. A TCP connect to the port is not proof: when the port was taken between probing and
 * binding, our server exits and the connect reaches the other process's server — and a cluster
 * whose services join a foreign NATS shares its subjects, lock traffic included.
 */
export async function waitForNatsReady(wait: NatsReadyWait): Promise<void> {
  const listening = `Listening for client connections on 127.0.0.1:${wait.port}`;
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    const text = readFrom(wait.log, wait.fromByte);
    if (text.includes(listening) && text.includes('Server is ready')) return;
    if (!wait.isAlive(wait.pid)) throw new NatsStartError(`nats-server (pid ${wait.pid}) exited before listening on port ${wait.port}: ${lastLines(text)}`, true);
    if (Date.now() > deadline) throw new NatsStartError(`nats-server (pid ${wait.pid}) did not report listening on port ${wait.port} within ${wait.timeoutMs} ms: ${lastLines(text)}`, false);
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

function lastLines(text: string, lines = 4): string {
  const tail = text.trim().split('\n').slice(-lines).join(' | ');
  return tail === '' ? '(no output)' : tail;
}
