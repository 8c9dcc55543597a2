import { describe, expect, it } from 'vitest';
import { connectNats, describeNatsStatus } from '../src/nats-connect.js';
import { memoryLogger, startNatsServer, waitFor } from './support.js';

describe('connectNats', () => {
  it('logs the connection, a server restart, and the reconnect', async () => {
    const first = await startNatsServer();
    const logger = memoryLogger();
    const nc = await connectNats({ servers: first.url, name: 'svc-test', logger, reconnectTimeWaitMs: 50, reconnectJitterMs: 10 });
    let second: Awaited<ReturnType<typeof startNatsServer>> | undefined;
    try {
      expect(logger.lines[0]).toMatch(/^INFO nats svc-test: connected to 127\.0\.0\.1:\d+$/);
      await first.kill();
      await waitFor(() => logger.lines.some((line) => line.startsWith('WARN nats svc-test: disconnected')), { what: 'the disconnect line' });
      second = await startNatsServer({ port: first.port });
      await waitFor(() => logger.lines.some((line) => line.startsWith('INFO nats svc-test: reconnected')), { what: 'the reconnect line', timeoutMs: 10_000 });
      await nc.flush(); // the connection works again
    } finally {
      await nc.close();
      await second?.stop();
    }
  });

  it('stays quiet about pings and reconnect attempts', () => {
    expect(describeNatsStatus('x', { type: 'ping', pendingPings: 1 })).toBeUndefined();
    expect(describeNatsStatus('x', { type: 'reconnecting' })).toBeUndefined();
    expect(describeNatsStatus('x', { type: 'ldm', server: 's:1' })).toEqual({ level: 'warn', message: 'nats x: server s:1 entered lame-duck mode' });
  });
});
