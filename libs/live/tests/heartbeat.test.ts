import type { NatsConnection } from '@nats-io/transport-node';
import type { Heartbeat } from '@lockfabric/wire';
import { decodeWire, HeartbeatSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHeartbeat } from '../src/heartbeat.js';
import { connectNats } from '../src/nats-connect.js';
import { createSubjects } from '../src/subjects.js';
import { memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('hb-test');
let nats: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connectNats({ servers: nats.url, name: 'hb', logger: memoryLogger() });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

describe('heartbeat', () => {
  it('publishes Heartbeat messages on hb.<role>.<id> with growing seq', async () => {
    const seen: { subject: string; heartbeat: Heartbeat }[] = [];
    nc.subscribe(subjects.heartbeatAll(), { callback: (_error, msg) => void seen.push({ subject: msg.subject, heartbeat: decodeWire(HeartbeatSchema, msg.data, msg.subject) }) });
    await nc.flush();
    let ready = false;
    const publisher = startHeartbeat({ nc, subjects, role: 'memory', id: 'mn-0', node: 3, incarnation: 2, intervalMs: 10, ready: () => ready, logger: memoryLogger() });
    try {
      await waitFor(() => seen.length >= 1, { what: 'the first heartbeat' });
      ready = true;
      await waitFor(() => seen.length >= 3, { what: 'three heartbeats' });
    } finally {
      publisher.stop();
    }
    expect(seen[0]?.subject).toBe('lf.hb-test.hb.memory.mn-0');
    expect(seen[0]?.heartbeat).toMatchObject({ role: 'memory', id: 'mn-0', node: 3, incarnation: 2n, seq: 1n, ready: false });
    expect(seen.map((s) => s.heartbeat.seq)).toEqual(seen.map((_, i) => BigInt(i + 1)));
    expect(seen.at(-1)?.heartbeat.ready).toBe(true);
    expect(seen[0]?.heartbeat.timeNs).toBeGreaterThan(0n);
  });

  it('refuses a non-positive interval', () => {
    expect(() => startHeartbeat({ nc, subjects, role: 'memory', id: 'x', node: 0, incarnation: 1, intervalMs: 0 })).toThrow(RangeError);
  });
});
