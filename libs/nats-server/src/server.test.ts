import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findNatsServer, isRunning, NatsServerNotFoundError, NatsServerStartError, startNatsServer } from './index.js';

/** The first line a server sends on a fresh TCP connection, or the connection error. */
function firstLine(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString();
      const end = data.indexOf('\r\n');
      if (end >= 0) {
        socket.destroy();
        resolve(data.slice(0, end));
      }
    });
    socket.once('error', reject);
  });
}

/** A port the OS hands out for a throwaway listener. */
function osPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'lf-nats-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('startNatsServer (attached: tests, one command)', () => {
  it('starts a server that speaks NATS, and stops it', async () => {
    const server = await startNatsServer();
    try {
      expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
      expect(server.argv).toContain(String(server.port));
      expect(await firstLine(server.port)).toMatch(/^INFO \{/);
    } finally {
      await server.stop();
    }
    await expect(firstLine(server.port)).rejects.toThrow(/ECONNREFUSED/);
    await server.stop(); // idempotent
  });

  it('kill() ends the server like a crash, and a new one can take over its port', async () => {
    const first = await startNatsServer();
    await first.kill();
    const second = await startNatsServer({ port: first.port });
    try {
      expect(await firstLine(second.port)).toMatch(/^INFO/);
    } finally {
      await second.stop();
    }
  });

  it('refuses a port another server holds, though a TCP connect to it succeeds; with a free-port picker it moves on', async () => {
    const holder = await startNatsServer();
    try {
      // A connect-based readiness check would accept the second server: the port answers (holder's INFO).
      expect(await firstLine(holder.port)).toMatch(/^INFO/);
      await expect(startNatsServer({ port: holder.port })).rejects.toMatchObject({ exited: true, message: expect.stringMatching(/exited during start[\s\S]*address already in use/) });
      // The picker offers the taken port first: the launcher sees that server exit and tries the next.
      let offered = 0;
      const moved = await startNatsServer({ freePort: async () => (offered++ === 0 ? holder.port : await osPort()) });
      expect(offered).toBe(2);
      expect(moved.port).not.toBe(holder.port);
      await moved.stop();
    } finally {
      await holder.stop();
    }
  });

  it('names where it looked when the binary is missing, and reports the output when it cannot start', async () => {
    expect(() => findNatsServer('/nonexistent/nats-server')).toThrow(/looked at \/nonexistent\/nats-server/);
    await expect(startNatsServer({ binary: '/nonexistent/nats-server' })).rejects.toBeInstanceOf(NatsServerNotFoundError);
    await expect(startNatsServer({ binary: '/nonexistent/nats-server' })).rejects.toMatchObject({ code: 'NATS_SERVER_NOT_FOUND' });
    const starting = startNatsServer({ args: ['--no-such-flag'] });
    await expect(starting).rejects.toBeInstanceOf(NatsServerStartError);
    await expect(starting).rejects.toThrow(/exited during start[\s\S]*nats-server output[\s\S]*no-such-flag/);
  });
});

describe('startNatsServer (detached: a local cluster)', () => {
  it('writes to its log, answers, and stops by pid', async () => {
    const log = join(dir, 'nats.log');
    const server = await startNatsServer({ log });
    expect(isRunning(server.pid)).toBe(true);
    expect(await firstLine(server.port)).toMatch(/^INFO/);
    expect(readFileSync(log, 'utf8')).toContain(`Listening for client connections on 127.0.0.1:${server.port}`);
    await server.stop();
    expect(isRunning(server.pid)).toBe(false);
  });

  it('fails with exited=true, naming the log tail, when its port is held (the old ready lines of the log do not count)', async () => {
    const log = join(dir, 'shared.log');
    const holder = await startNatsServer({ log });
    try {
      // The same log already says "listening on <port>" from the holder: only what the new server appends counts.
      const again = startNatsServer({ log, port: holder.port });
      await expect(again).rejects.toMatchObject({ exited: true, message: expect.stringMatching(/exited before listening on port/) });
    } finally {
      await holder.stop();
    }
  });
});
