import type { NatsConnection } from '@nats-io/transport-node';
import { ControlNoRespondersError, ControlRequestTimeoutError } from '@lockfabric/control';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsControlBus } from '../src/nats-control-bus.js';
import { connectNats } from '../src/nats-connect.js';
import { memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

let nats: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connectNats({ servers: nats.url, name: 'bus', logger: memoryLogger() });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

describe('the ControlBus over NATS (the live adapter of libs/control)', () => {
  it('publishes and subscribes with NATS wildcards; a throwing handler does not close the connection', async () => {
    const bus = new NatsControlBus(nc);
    const heard: string[] = [];
    const off = bus.subscribe('cb.t.*', (m) => {
      heard.push(`${m.subject}:${m.data[0]}`);
      if (m.data[0] === 1) throw new Error('a handler bug');
    });
    await nc.flush();
    bus.publish('cb.t.a', Uint8Array.of(1));
    bus.publish('cb.t.b', Uint8Array.of(2));
    bus.publish('cb.u.c', Uint8Array.of(3));
    await waitFor(() => heard.length === 2, { what: 'two messages' });
    expect(heard).toStrictEqual(['cb.t.a:1', 'cb.t.b:2']);
    expect(nc.isClosed()).toBe(false);
    off();
  });

  it('request/reply, and no responders and timeouts as the typed errors of the port', async () => {
    const bus = new NatsControlBus(nc);
    bus.subscribe('cb.echo', (m) => m.respond?.(Uint8Array.of((m.data[0] ?? 0) + 1)));
    bus.subscribe('cb.silent', () => undefined);
    await nc.flush();
    expect([...(await bus.request('cb.echo', Uint8Array.of(41), { timeoutMs: 2_000 }))]).toStrictEqual([42]);
    await expect(bus.request('cb.nobody', Uint8Array.of(0), { timeoutMs: 2_000 })).rejects.toBeInstanceOf(ControlNoRespondersError);
    await expect(bus.request('cb.silent', Uint8Array.of(0), { timeoutMs: 50 })).rejects.toBeInstanceOf(ControlRequestTimeoutError);
  });
});
