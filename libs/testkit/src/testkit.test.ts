import { connect } from 'node:net';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { findNatsServer, freePort, NatsServerNotFoundError, NatsServerStartError, startNatsServer, waitFor, WaitForTimeoutError } from './index.js';

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

describe('freePort', () => {
  it('returns a port a server can then listen on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('waitFor', () => {
  it('returns the first truthy value, treating throws as "not yet"', async () => {
    let calls = 0;
    const value = await waitFor(() => {
      calls++;
      if (calls < 3) throw new Error('not ready');
      return calls === 4 && { calls };
    });
    expect(value).toEqual({ calls: 4 });
  });

  it('times out with what it waited for and the last error', async () => {
    const waiting = waitFor(
      () => {
        throw new Error('still closed');
      },
      { timeoutMs: 30, intervalMs: 5, what: 'the door to open' },
    );
    await expect(waiting).rejects.toThrow(WaitForTimeoutError);
    await expect(waiting).rejects.toThrow('timed out after 30 ms waiting for the door to open; last check threw: still closed');
  });
});

describe('startNatsServer', () => {
  it('starts a server that speaks NATS, and stops it', async () => {
    const server = await startNatsServer();
    try {
      expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
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

  it('refuses a port another server holds, though a TCP connect to it succeeds', async () => {
    const holder = await startNatsServer();
    try {
      // A connect-based readiness check would accept the second server: the port answers (holder's INFO).
      expect(await firstLine(holder.port)).toMatch(/^INFO/);
      await expect(startNatsServer({ port: holder.port })).rejects.toThrow(/exited during start[\s\S]*address already in use/);
    } finally {
      await holder.stop();
    }
  });

  it('names where it looked when the binary is missing', async () => {
    expect(() => findNatsServer('/nonexistent/nats-server')).toThrow(/looked at \/nonexistent\/nats-server/);
    await expect(startNatsServer({ binary: '/nonexistent/nats-server' })).rejects.toThrow(NatsServerNotFoundError);
  });

  it('reports the server output when it cannot start', async () => {
    const starting = startNatsServer({ args: ['--no-such-flag'] });
    await expect(starting).rejects.toThrow(NatsServerStartError);
    await expect(starting).rejects.toThrow(/exited during start[\s\S]*nats-server output[\s\S]*no-such-flag/);
  });
});
