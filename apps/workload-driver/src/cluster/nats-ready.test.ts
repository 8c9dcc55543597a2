import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './local-cluster.js';
import { findNatsServer } from './nats-binary.js';
import { NatsStartError, logSize, waitForNatsReady } from './nats-ready.js';
import { isRunning, spawnLogged } from './process-control.js';

const started: number[] = [];
const dirs: string[] = [];

function startNats(port: number, log: string): { pid: number; fromByte: number } {
  const fromByte = logSize(log);
  const pid = spawnLogged([findNatsServer()!, '-a', '127.0.0.1', '-p', String(port)], log);
  started.push(pid);
  return { pid, fromByte };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('waitForNatsReady', () => {
  it('accepts a server that reports listening on its port, and refuses one whose port another server holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nats-ready-'));
    dirs.push(dir);
    const port = await freePort();
    const first = startNats(port, join(dir, 'first.log'));
    await waitForNatsReady({ ...first, port, log: join(dir, 'first.log'), timeoutMs: 10_000, isAlive: isRunning });

    const second = startNats(port, join(dir, 'second.log'));
    // What the old check looked at: the port answers — but it is the first server answering.
    expect(await answers(port)).toBe(true);
    const waiting = waitForNatsReady({ ...second, port, log: join(dir, 'second.log'), timeoutMs: 10_000, isAlive: isRunning });
    await expect(waiting).rejects.toBeInstanceOf(NatsStartError);
    await expect(waiting).rejects.toMatchObject({ exited: true, message: expect.stringMatching(/exited before listening on port/) });
  });

  it('reads only what a restart appended: the old run\'s ready lines do not count', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nats-ready-'));
    dirs.push(dir);
    const log = join(dir, 'nats.log');
    const port = await freePort();
    const first = startNats(port, log);
    await waitForNatsReady({ ...first, port, log, timeoutMs: 10_000, isAlive: isRunning });
    // A restart on the same port while the old server still holds it: its log has the old lines.
    const again = startNats(port, log);
    await expect(waitForNatsReady({ ...again, port, log, timeoutMs: 10_000, isAlive: isRunning })).rejects.toMatchObject({ exited: true });
    // From byte 0 the old lines would (wrongly) pass: the offset is what makes the check sound.
    await expect(waitForNatsReady({ pid: first.pid, port, log, fromByte: 0, timeoutMs: 1_000, isAlive: isRunning })).resolves.toBeUndefined();
  });
});
