import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcRoundTripUs, grpcStreamThroughput, natsPubSubThroughput, natsRoundTripUs, startEchoServer, type EchoServer } from '../src/raw-transport.js';
import { createSubjects } from '../src/subjects.js';
import { startNatsServer, type NatsServerHandle } from './support.js';

// Small counts: these check that the measurements run and return figures, not what the figures are.
let nats: NatsServerHandle;
let echo: EchoServer;
const subjects = createSubjects('raw-test');

beforeAll(async () => {
  [nats, echo] = await Promise.all([startNatsServer(), startEchoServer()]);
});

afterAll(async () => {
  await echo?.close();
  await nats?.stop();
});

describe('raw transport limits', () => {
  it('gRPC stream round trip and pipelined throughput are positive numbers', async () => {
    expect(await grpcRoundTripUs(echo.address, { messages: 50, warmup: 5 })).toBeGreaterThan(0);
    expect(await grpcStreamThroughput(echo.address, { messages: 500, window: 16 })).toBeGreaterThan(0);
  });

  it('NATS request/reply round trip and pub/sub throughput are positive numbers', async () => {
    expect(await natsRoundTripUs({ servers: nats.url, subjects, messages: 50, warmup: 5 })).toBeGreaterThan(0);
    expect(await natsPubSubThroughput({ servers: nats.url, subjects, messages: 2_000 })).toBeGreaterThan(0);
  });
});
