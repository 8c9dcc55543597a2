import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from '../src/health-server.js';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('health server', () => {
  it('answers liveness, readiness from its callback, and metrics text', async () => {
    let ready = false;
    server = await startHealthServer({ port: 0, host: '127.0.0.1', ready: () => ready, metrics: () => 'lockfabric_up 1\n' });
    expect(server.port).toBeGreaterThan(0);

    const healthz = await fetch(`${server.url}/healthz`);
    expect([healthz.status, await healthz.text()]).toEqual([200, 'ok\n']);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
    ready = true;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await metrics.text()).toBe('lockfabric_up 1\n');

    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`, { method: 'POST' })).status).toBe(405);
  });

  it('reports a failing callback as 500 and keeps serving', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      metrics: () => {
        throw new Error('registry broken');
      },
    });
    const metrics = await fetch(`${server.url}/metrics`);
    expect([metrics.status, await metrics.text()]).toEqual([500, 'registry broken\n']);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('closes the connection after every answer, so no client reuses a socket the server may be closing', async () => {
    server = await startHealthServer({ port: 0, host: '127.0.0.1', metrics: () => 'lockfabric_up 1\n' });
    // A raw HTTP/1.1 request, keep-alive by default: the server must say `connection: close` and end the socket itself.
    const socket = connect(server.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    const ended = new Promise<void>((resolve, reject) => {
      socket.once('end', () => resolve());
      socket.once('error', reject);
    });
    socket.write('GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await ended;
    socket.destroy();
    const [head] = answer.split('\r\n\r\n');
    expect(head?.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(head?.toLowerCase().split('\r\n')).toContain('connection: close');
    expect(answer).toContain('lockfabric_up 1\n');
  });

  it('frees its port on close', async () => {
    const first = await startHealthServer({ port: 0, host: '127.0.0.1' });
    await first.close();
    server = await startHealthServer({ port: first.port, host: '127.0.0.1' });
    expect(server.port).toBe(first.port);
  });
});
