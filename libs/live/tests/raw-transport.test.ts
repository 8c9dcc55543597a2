import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcRoundTripUs, grpcStreamThroughput, natsPubSubThroughput, natsRoundTripUs, openGrpcRoundTrips, openNatsRoundTrips, roundTripStats, startEchoServer, type EchoServer, type RoundTripSession } from '../src/raw-transport.js';
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

  // The interleaved floor measures each path in rounds on one connection, warmed up once.
  it('a session samples in batches on one connection and counts every request, warm-up included', async () => {
    const batches = async (session: RoundTripSession) => {
      try {
        const first = await session.sample(7);
        const second = await session.sample(5);
        expect([first.length, second.length]).toStrictEqual([7, 5]);
        for (const us of [...first, ...second]) expect(us).toBeGreaterThan(0);
        expect(session.exchanges()).toBe(3 + 7 + 5);
      } finally {
        await session.close();
      }
    };
    await batches(await openGrpcRoundTrips(echo.address, { warmup: 3 }));
    await batches(await openNatsRoundTrips({ servers: nats.url, subjects, warmup: 3 }));
  });

  it('roundTripStats: the upper median and the mean of the samples', () => {
    expect(roundTripStats([30, 10, 20, 40], 9)).toStrictEqual({ p50Us: 30, meanUs: 25, exchanges: 9 });
    expect(roundTripStats([], 0)).toStrictEqual({ p50Us: 0, meanUs: 0, exchanges: 0 });
  });
});
