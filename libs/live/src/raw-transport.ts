import { randomUUID } from 'node:crypto';
import { Client, Server, type ChannelCredentials, type ClientDuplexStream, type ServerDuplexStream } from '@grpc/grpc-js';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { natsAuthOptions } from './nats-connect.js';
import { asUint8Array, rawMethod, toBuffer } from './grpc-raw.js';
import type { MemoryQueuePair } from './memory-client.js';
import { LockFabricError } from '@lockfabric/ports';
import type { WorkRequest } from '@lockfabric/ports';
import type { Subjects } from './subjects.js';
import { channelCredentialsFor, serverCredentialsFor, type TlsMaterial } from './tls/credentials.js';
import { clientChannelOptions, tlsChannelOptions } from './tls/process-tls.js';
import { FabricAccessError } from '@lockfabric/ports';

// The raw limits `lockfabric transport` reports next to every protocol figure (DESIGN §9): bare
// gRPC streams and bare NATS on the same machine, with no protobuf, batching or lock logic.
// Benchmarks, not tests: they measure wall-clock time and return plain numbers.

export const echoMethod = rawMethod('/lockfabric.raw.Echo/Stream', true, true);

/** A transport measurement gave up: fewer messages arrived than were sent before its deadline. */
export class TransportProbeTimeoutError extends LockFabricError {
  readonly code = 'TRANSPORT_PROBE_TIMEOUT';
}

/** Writes every frame of a bidi stream straight back: the bare round trip, with no protobuf or lock logic. */
export function echoStream(call: ServerDuplexStream<Uint8Array, Uint8Array>): void {
  call.on('data', (frame: Uint8Array) => call.write(frame));
  call.on('end', () => call.end());
  call.on('error', () => {}); // a benchmark client going away is not our problem
}

export interface EchoServer {
  readonly port: number;
  readonly address: string;
  close(): Promise<void>;
}

/** A gRPC service that writes every frame of a bidi stream straight back. */
/** With `tls`, the server demands nothing of the client: this measures the cost of the encryption, not of the guard. */
export async function startEchoServer(options: { host?: string; port?: number; tls?: TlsMaterial } = {}): Promise<EchoServer> {
  const host = options.host ?? '127.0.0.1';
  const server = new Server();
  server.addService(
    { stream: echoMethod },
    { stream: echoStream },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${options.port ?? 0}`, serverCredentialsFor(options.tls), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    port,
    address: `${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

export interface RoundTripOptions {
  /** Measured round trips. */
  readonly messages?: number;
  /** Round trips before measuring, to warm up connections and the JIT. */
  readonly warmup?: number;
  readonly payloadBytes?: number;
  /** Connect over mutual TLS with these certificates (the echo server must use TLS too). */
  readonly tls?: TlsMaterial;
  /** Connect with these credentials instead (e.g. the process's own, to a cluster's memory node); wins over `tls`. */
  readonly credentials?: ChannelCredentials;
}

export interface ThroughputOptions {
  readonly messages?: number;
  readonly payloadBytes?: number;
  readonly tls?: TlsMaterial;
  readonly credentials?: ChannelCredentials;
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** A round trip's median and mean over the measured exchanges; `exchanges` counts warm-up ones too. */
export interface RoundTripStats {
  readonly p50Us: number;
  readonly meanUs: number;
  /** Every request sent, warm-up included: what a responder that counts its answers sees. */
  readonly exchanges: number;
}

/** The median and mean of round-trip samples (µs), as every round-trip probe here reports them. */
export function roundTripStats(samples: readonly number[], exchanges: number): RoundTripStats {
  const meanUs = samples.length === 0 ? 0 : samples.reduce((a, b) => a + b, 0) / samples.length;
  return { p50Us: median(samples), meanUs, exchanges };
}

/**
 * One connection kept open for round trips in several batches, one message in flight, warmed up
 * once when opened: a floor measured between other work without reconnecting each time.
 */
export interface RoundTripSession {
  /** `messages` round trips, each one's time in µs. */
  sample(messages: number): Promise<number[]>;
  /** Requests sent so far, warm-up included. */
  exchanges(): number;
  close(): Promise<void>;
}

/** Times `exchange` one call at a time, after `warmup` untimed ones; `close` on a failed warm-up too. */
async function openSession(exchange: () => Promise<void>, warmup: number, close: () => Promise<void>): Promise<RoundTripSession> {
  let sent = 0;
  const sample = async (messages: number) => {
    const samples: number[] = [];
    for (let i = 0; i < messages; i++) {
      const startMs = performance.now();
      sent++;
      await exchange();
      samples.push((performance.now() - startMs) * 1_000);
    }
    return samples;
  };
  try {
    await sample(warmup);
  } catch (error) {
    await close();
    throw error;
  }
  return { sample, exchanges: () => sent, close };
}

function openEcho(address: string, options: { tls?: TlsMaterial; credentials?: ChannelCredentials }): { client: Client; call: ClientDuplexStream<Uint8Array, Uint8Array> } {
  const client = new Client(address, options.credentials ?? channelCredentialsFor(options.tls), options.credentials ? clientChannelOptions() : tlsChannelOptions(options.tls !== undefined));
  const call = client.makeBidiStreamRequest<Uint8Array, Uint8Array>(echoMethod.path, toBuffer, asUint8Array);
  call.on('error', () => {});
  return { client, call };
}

/** Median gRPC stream round trip in µs with one message in flight. */
export async function grpcRoundTripUs(address: string, options: RoundTripOptions = {}): Promise<number> {
  return (await grpcRoundTripStats(address, options)).p50Us;
}

/** gRPC stream round trip (median and mean, µs) with one message in flight. */
export async function grpcRoundTripStats(address: string, options: RoundTripOptions = {}): Promise<RoundTripStats> {
  return measureOnce(await openGrpcRoundTrips(address, options), options.messages ?? 2_000);
}

async function measureOnce(session: RoundTripSession, messages: number): Promise<RoundTripStats> {
  try {
    return roundTripStats(await session.sample(messages), session.exchanges());
  } finally {
    await session.close();
  }
}

/** A gRPC echo stream for round trips in batches (`RoundTripSession`); a stream error fails the pending one. */
export async function openGrpcRoundTrips(address: string, options: Omit<RoundTripOptions, 'messages'> = {}): Promise<RoundTripSession> {
  const { warmup = 200, payloadBytes = 64 } = options;
  const payload = new Uint8Array(payloadBytes);
  const { client, call } = openEcho(address, options);
  let pending: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  call.on('data', () => pending?.resolve());
  call.on('error', (error) => pending?.reject(error));
  const exchange = () =>
    new Promise<void>((resolve, reject) => {
      pending = { resolve, reject };
      call.write(payload);
    });
  return openSession(exchange, warmup, async () => {
    call.end();
    client.close();
  });
}

/** gRPC stream messages per second with up to `window` messages in flight. */
export async function grpcStreamThroughput(address: string, options: ThroughputOptions & { window?: number } = {}): Promise<number> {
  const { messages = 20_000, window = 64, payloadBytes = 64 } = options;
  const payload = new Uint8Array(payloadBytes);
  const { client, call } = openEcho(address, options);
  try {
    const startMs = performance.now();
    await new Promise<void>((resolve, reject) => {
      let sent = 0;
      let received = 0;
      call.on('error', reject);
      call.on('data', () => {
        received++;
        if (received === messages) resolve();
        else if (sent < messages) {
          sent++;
          call.write(payload);
        }
      });
      for (; sent < Math.min(window, messages); sent++) call.write(payload);
    });
    return messages / ((performance.now() - startMs) / 1_000);
  } finally {
    call.end();
    client.close();
  }
}

/**
 * Verbs per second one queue pair gets served by a memory node with up to `window` doorbells in
 * flight, each doorbell one verb (`verb`): the memory node's side of `grpcStreamThroughput` (same
 * window, one gRPC message per verb), so the two divide into the node's cost per message.
 */
export async function memoryNodeVerbThroughput(qp: MemoryQueuePair, verb: WorkRequest, options: { messages?: number; window?: number } = {}): Promise<number> {
  const { messages = 20_000, window = 64 } = options;
  let sent = 0;
  const startMs = performance.now();
  const lane = async () => {
    while (sent < messages) {
      sent++;
      const done = qp.post([verb]);
      qp.flush(); // its own doorbell: one message, as in the echo benchmark
      const [completion] = await done;
      if (completion?.status !== 'ok') throw new FabricAccessError(completion?.status ?? 'unreachable', `memory node answered ${completion?.status ?? 'nothing'}: ${completion?.detail ?? ''}`);
    }
  };
  await Promise.all(Array.from({ length: window }, lane));
  return messages / ((performance.now() - startMs) / 1_000);
}

export interface NatsBenchOptions {
  /** `nats://host:port`. */
  readonly servers: string;
  readonly subjects: Subjects;
}

async function bareConnection(servers: string, name: string): Promise<NatsConnection> {
  return connect({ servers, name, maxReconnectAttempts: 0, ...natsAuthOptions() });
}

/** Median NATS request/reply round trip in µs, requester and responder on separate connections. */
export async function natsRoundTripUs(options: NatsBenchOptions & RoundTripOptions): Promise<number> {
  return (await natsRoundTripStats(options)).p50Us;
}

/** NATS request/reply round trip (median and mean, µs), requester and responder on separate connections of this process. */
export async function natsRoundTripStats(options: NatsBenchOptions & RoundTripOptions): Promise<RoundTripStats> {
  return measureOnce(await openNatsRoundTrips(options), options.messages ?? 2_000);
}

/** NATS request/reply in batches (`RoundTripSession`), requester and responder on separate connections of this process. */
export async function openNatsRoundTrips(options: NatsBenchOptions & Omit<RoundTripOptions, 'messages'>): Promise<RoundTripSession> {
  const subject = options.subjects.raw(`ping-${randomUUID()}`);
  const responder = await bareConnection(options.servers, 'lockfabric-raw-responder');
  const requester = await bareConnection(options.servers, 'lockfabric-raw-requester').catch(async (error: unknown) => (await responder.close(), Promise.reject(error)));
  const close = async () => void (await Promise.all([requester.close(), responder.close()]));
  try {
    responder.subscribe(subject, {
      callback: (_error, msg) => {
        msg.respond(msg.data);
      },
    });
    await responder.flush();
  } catch (error) {
    await close();
    throw error;
  }
  return requestSession(requester, subject, options, close);
}

function requestSession(requester: NatsConnection, subject: string, options: Omit<RoundTripOptions, 'messages'>, close: () => Promise<void>): Promise<RoundTripSession> {
  const { warmup = 200, payloadBytes = 64 } = options;
  const payload = new Uint8Array(payloadBytes);
  return openSession(async () => void (await requester.request(subject, payload, { timeout: 5_000 })), warmup, close);
}

/**
 * NATS request/reply round trip (median and mean, µs) to a responder in another process — a
 * switch's echo subject (`subjects.switchEcho`): the path a switch lock's request and grant take,
 * this process → nats-server → switch → nats-server → this process.
 */
export async function natsEchoRoundTripStats(servers: string, subject: string, options: RoundTripOptions = {}): Promise<RoundTripStats> {
  return measureOnce(await openNatsEchoRoundTrips(servers, subject, options), options.messages ?? 2_000);
}

/** Requests to another process's echo subject in batches (`RoundTripSession`). */
export async function openNatsEchoRoundTrips(servers: string, subject: string, options: Omit<RoundTripOptions, 'messages'> = {}): Promise<RoundTripSession> {
  const requester = await bareConnection(servers, 'lockfabric-raw-echo-requester');
  return requestSession(requester, subject, options, () => requester.close());
}

/** NATS messages per second from one publisher to one subscriber on another connection. */
export async function natsPubSubThroughput(options: NatsBenchOptions & ThroughputOptions & { timeoutMs?: number }): Promise<number> {
  const { messages = 50_000, payloadBytes = 64, timeoutMs = 30_000 } = options;
  const subject = options.subjects.raw(`pubsub-${randomUUID()}`);
  const subscriber = await bareConnection(options.servers, 'lockfabric-raw-subscriber');
  const publisher = await bareConnection(options.servers, 'lockfabric-raw-publisher');
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    let received = 0;
    const all = new Promise<void>((resolve, reject) => {
      subscriber.subscribe(subject, {
        callback: () => {
          if (++received === messages) resolve();
        },
      });
      timer = setTimeout(() => reject(new TransportProbeTimeoutError(`only ${received} of ${messages} messages arrived within ${timeoutMs} ms`)), timeoutMs);
    });
    await subscriber.flush();
    const payload = new Uint8Array(payloadBytes);
    const startMs = performance.now();
    for (let i = 0; i < messages; i++) publisher.publish(subject, payload);
    await publisher.flush();
    await all;
    return messages / ((performance.now() - startMs) / 1_000);
  } finally {
    clearTimeout(timer);
    await Promise.all([publisher.close(), subscriber.close()]);
  }
}
