import { create, toBinary } from '@bufbuild/protobuf';
import { Client, credentials, type ClientDuplexStream } from '@grpc/grpc-js';
import type { Completion, RemoteAddr, WorkRequest } from '@lockfabric/ports';
import {
  decodeCompletionBatch,
  MemoryService,
  Opcode,
  VerbStatus,
  WorkRequestBatchSchema,
  WorkRequestSchema,
  type CompletionBatch,
} from '@lockfabric/wire';
import { afterEach, describe, expect, it } from 'vitest';
import { rawMethodOf, toBuffer } from '../src/grpc-raw.js';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { MemoryQueuePair, rebindDelayMs, type MemoryQueuePairOptions } from '../src/memory-client.js';
import { grpcRoundTripUs, grpcStreamThroughput } from '../src/raw-transport.js';
import { startMemoryServer, type MemoryServer, type MemoryServerOptions } from '../src/memory-server.js';
import { FakeExecutor, memoryLogger, waitFor } from './support.js';

const word = (offset: number): RemoteAddr => ({ node: 9, region: 0, rkey: 77, offset });
const faa = (offset: number, add = 1n): WorkRequest => ({ addr: word(offset), op: 'faa', add });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(executor: FakeExecutor, options: Partial<MemoryServerOptions> = {}): Promise<{ server: MemoryServer; malformed: MalformedInputCounter }> {
  const logger = memoryLogger();
  const malformed = new MalformedInputCounter({ logger });
  const server = await startMemoryServer({ executor, host: '127.0.0.1', logger, malformed, ...options });
  cleanups.push(() => server.kill());
  return { server, malformed };
}

async function queuePair(address: string, options: MemoryQueuePairOptions = {}): Promise<MemoryQueuePair> {
  const qp = await MemoryQueuePair.connect(address, 4, { logger: memoryLogger(), ...options });
  cleanups.push(() => qp.close());
  return qp;
}

/** A bare Connect stream that sends whatever bytes the test gives it. */
function rawStream(address: string): { call: ClientDuplexStream<Uint8Array, Uint8Array>; next: () => Promise<CompletionBatch> } {
  const client = new Client(address, credentials.createInsecure());
  const method = rawMethodOf(MemoryService.method.connect);
  const call = client.makeBidiStreamRequest<Uint8Array, Uint8Array>(method.path, toBuffer, (b: Buffer) => b);
  call.on('error', () => {});
  const received: CompletionBatch[] = [];
  const waiting: ((batch: CompletionBatch) => void)[] = [];
  call.on('data', (bytes: Uint8Array) => {
    const batch = decodeCompletionBatch(bytes, 'test');
    const waiter = waiting.shift();
    if (waiter) waiter(batch);
    else received.push(batch);
  });
  cleanups.push(() => {
    call.cancel();
    client.close();
  });
  const next = () => {
    const ready = received.shift();
    return ready ? Promise.resolve(ready) : new Promise<CompletionBatch>((resolve) => waiting.push(resolve));
  };
  return { call, next };
}

describe('memory server and queue pair', () => {
  it('coalesce the posts of one tick into one doorbell and complete each post in order', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);

    const resolved: string[] = [];
    const track = (name: string, post: Promise<Completion[]>) => post.then((completions) => (resolved.push(name), completions));
    const a = track('a', qp.post([faa(0), faa(0), faa(0)]));
    const b = track('b', qp.post([faa(0, 10n)]));
    const c = track('c', qp.post([{ addr: word(0), op: 'cas', compare: 13n, swap: 100n }, { addr: word(0), op: 'read', length: 8 }]));
    const [ra, rb, rc] = await Promise.all([a, b, c]);

    expect(executor.batches).toHaveLength(1);
    expect(executor.batches[0]?.initiator).toBe(4);
    expect(executor.batches[0]?.requests).toHaveLength(6);
    expect(qp.stats()).toMatchObject({ posts: 3, doorbells: 1, requestsSent: 6, completed: 6, unreachable: 0 });
    expect(ra?.map((x) => x.value)).toEqual([0n, 1n, 2n]);
    expect(rb).toEqual([{ status: 'ok', value: 3n }]);
    expect(rc?.[0]).toEqual({ status: 'ok', value: 13n });
    expect(rc?.[1]?.data).toEqual(new Uint8Array([100, 0, 0, 0, 0, 0, 0, 0]));
    expect(resolved).toEqual(['a', 'b', 'c']);

    // A later tick rings a second doorbell.
    await qp.post([faa(8)]);
    expect(executor.batches).toHaveLength(2);
  });

  it('carries the post trace on the batch, and a different one per request', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);
    const t1 = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
    const t2 = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
    await Promise.all([qp.post([faa(0)], { trace: t1 }), qp.post([faa(0)], { trace: t1 }), qp.post([faa(0)], { trace: t2 })]);
    expect(executor.batches[0]?.context).toEqual({ trace: t1, requestTraces: [undefined, undefined, t2] });
    // A post without a trace does not inherit the doorbell's: the earlier requests carry it each.
    await Promise.all([qp.post([faa(0)], { trace: t1 }), qp.post([faa(0)], { trace: t2 }), qp.post([faa(0)])]);
    expect(executor.batches[1]?.context).toEqual({ requestTraces: [t1, t2, undefined] });
  });

  it('puts only sampled trace contexts on the wire', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);
    const unsampled = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 0 };
    const sampled = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
    const other = { traceId: '0af7651916cd43dd8448eb211c80319d', spanId: 'b7ad6b7169203332', traceFlags: 2 };
    await Promise.all([qp.post([faa(0), faa(8)], { trace: unsampled }), qp.post([faa(0)], { trace: sampled }), qp.post([faa(0)], { trace: other })]);
    expect(executor.batches[0]?.context).toEqual({ requestTraces: [undefined, undefined, sampled, undefined] });
    // A doorbell whose first post is sampled carries its context for the posts of that span (the
    // server hands the executor no per-request list when no request has a context of its own)...
    await Promise.all([qp.post([faa(0)], { trace: sampled }), qp.post([faa(8)], { trace: sampled })]);
    expect(executor.batches[1]?.context).toEqual({ trace: sampled });
    // ...and gives it to each of them once an unsampled post joins, which must not inherit it.
    await Promise.all([qp.post([faa(0), faa(8)], { trace: sampled }), qp.post([faa(0)], { trace: unsampled }), qp.post([faa(0)], { trace: sampled })]);
    expect(executor.batches[2]?.context).toEqual({ requestTraces: [sampled, sampled, undefined, sampled] });
  });

  it('answers a garbage frame with bad-request, counts it, and keeps the stream serving', async () => {
    const executor = new FakeExecutor();
    const { server, malformed } = await serve(executor);
    const { call, next } = rawStream(server.address);

    call.write(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff]));
    const garbage = await next();
    expect(garbage.completions).toHaveLength(1);
    expect(garbage.completions[0]).toMatchObject({ id: 0, status: VerbStatus.BAD_REQUEST });
    expect(garbage.completions[0]?.detail).toMatch(/not a lockfabric\.v1\.WorkRequestBatch/);

    // A decodable batch with one request of an opcode this build does not know.
    const batch = create(WorkRequestBatchSchema, {
      initiator: 2,
      requests: [
        create(WorkRequestSchema, { id: 5, opcode: Opcode.FAA, node: 9, rkey: 77, addLo: 7n }),
        create(WorkRequestSchema, { id: 6, opcode: 42 as Opcode, node: 9 }),
        create(WorkRequestSchema, { id: 7, opcode: Opcode.FAA, node: 9, rkey: 77, addLo: 1n }),
      ],
    });
    call.write(toBinary(WorkRequestBatchSchema, batch));
    const answer = await next();
    expect(answer.completions.map((c) => [c.id, c.status])).toEqual([
      [5, VerbStatus.OK],
      [6, VerbStatus.BAD_REQUEST],
      [7, VerbStatus.OK],
    ]);
    expect(answer.completions[2]?.valueLo).toBe(7n);
    expect(malformed.count()).toBe(2);
    expect(server.stats()).toMatchObject({ malformedFrames: 1, malformedRequests: 1, batches: 1 });
  });

  it('completes pending posts unreachable when the server dies, and reconnects on a later post', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);
    await qp.post([faa(0)]);

    executor.hold(); // the next batches stay in flight
    const pending = [qp.post([faa(0)]), qp.post([faa(8), faa(16)])];
    await waitFor(() => server.stats().batches === 2, { what: 'the batch to reach the executor' });
    server.kill();
    const outcomes = await Promise.all(pending);
    expect(outcomes.flat().map((c) => c.status)).toEqual(['unreachable', 'unreachable', 'unreachable']);
    expect(qp.stats().unreachable).toBe(3);

    // Nobody listens now: a post completes unreachable rather than hanging.
    const [down] = await qp.post([faa(0)]);
    expect(down?.status).toBe('unreachable');

    const revived = new FakeExecutor();
    await serve(revived, { port: server.port });
    const [again] = await waitFor(
      async () => {
        const completions = await qp.post([faa(0, 5n)]);
        return completions[0]?.status === 'ok' ? completions : undefined;
      },
      { what: 'a post to reach the restarted memory node', timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(again).toEqual({ status: 'ok', value: 0n });
    expect(qp.stats().streamsOpened).toBeGreaterThanOrEqual(2);
  });

  it('a queue pair bound by describe breaks when the memory node restarts: nothing reaches the new table until it is described again', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor, { incarnation: 1 });
    const qp = await queuePair(server.address);
    expect((await qp.describe()).incarnation).toBe(1);
    expect((await qp.post([faa(0)]))[0]?.status).toBe('ok');
    server.kill();

    const revived = new FakeExecutor();
    const { server: restarted } = await serve(revived, { port: server.port, incarnation: 2 });
    const [refused] = await waitFor(
      async () => {
        const completions = await qp.post([faa(0, 5n)]);
        return completions[0]?.detail?.startsWith('memory node restarted') ? completions : undefined;
      },
      { what: 'the restarted node to refuse the old binding', timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(refused?.status).toBe('unreachable');
    expect(refused?.detail).toMatch(/incarnation 1.*incarnation 2/);
    // Broken for good, without another round trip, until rebound.
    expect((await qp.post([faa(8)]))[0]?.detail).toMatch(/describe it again/);
    expect(revived.batches).toHaveLength(0);
    expect(restarted.stats().staleStreams).toBeGreaterThanOrEqual(1);

    expect((await qp.describe()).incarnation).toBe(2);
    expect(await qp.post([faa(0, 5n)])).toEqual([{ status: 'ok', value: 0n }]);
    expect(revived.batches).toHaveLength(1);
  });

  it('with rebind, a queue pair taken down by a restart describes the node again with backoff and binds the new incarnation', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor, { incarnation: 1 });
    const qp = await queuePair(server.address, { rebind: { initialMs: 20, maxMs: 200 } });
    await qp.describe();
    expect((await qp.post([faa(0)]))[0]?.status).toBe('ok');
    server.kill();
    await waitFor(async () => ((await qp.post([faa(0)]))[0]?.detail?.includes('rebinding') ? true : undefined), { what: 'the queue pair to go down', timeoutMs: 10_000, intervalMs: 20 });
    // Down: posts fail at once without the network (no stream is opened for them).
    const opened = qp.stats().streamsOpened;
    for (let i = 0; i < 100; i++) expect((await qp.post([faa(0)]))[0]?.status).toBe('unreachable');
    expect(qp.stats().streamsOpened).toBe(opened);
    expect(qp.up).toBe(false);

    const revived = new FakeExecutor();
    await serve(revived, { port: server.port, incarnation: 2 });
    await qp.whenUp(10_000);
    expect(qp.up).toBe(true);
    expect(qp.boundIncarnation).toBe(2);
    const stats = qp.stats();
    expect(stats.downs).toBe(1);
    expect(stats.incarnationChanges).toBe(1);
    expect(stats.rebindAttempts).toBe(stats.rebindFailures + 1);
    expect(await qp.post([faa(0, 5n)])).toEqual([{ status: 'ok', value: 0n }]);
    expect(revived.batches).toHaveLength(1);
  });

  it('rebindDelayMs doubles from the initial delay and stops at the cap', () => {
    expect([0, 1, 2, 3, 4, 10, 100].map((n) => rebindDelayMs({ initialMs: 50, maxMs: 1_000 }, n))).toStrictEqual([50, 100, 200, 400, 800, 1_000, 1_000]);
  });

  it('stops reading a stream at the in-flight bound and resumes when batches are answered', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor, { maxInFlightBatches: 2 });
    const qp = await queuePair(server.address);
    executor.hold();
    const posts = [];
    for (let i = 0; i < 6; i++) {
      posts.push(qp.post([faa(0)]));
      qp.flush(); // one doorbell each
    }
    await waitFor(() => server.stats().batches >= 1, { what: 'the first batch to be held' });
    executor.release();
    const results = await Promise.all(posts);
    expect(results.map((r) => r[0]?.value)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
    expect(server.stats().inFlightPeak).toBe(2);
  });

  it('answers a doorbell in the turn it arrives when the executor answers at once; queues behind one that waits', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);
    for (let i = 0; i < 5; i++) await qp.post([faa(0), faa(8)]);
    expect(server.stats()).toMatchObject({ batches: 5, answeredInline: 5 });
    // Held: the first doorbell waits on the executor, and the ones behind it must wait their turn.
    executor.hold();
    const held = [qp.post([faa(0)])];
    qp.flush();
    await waitFor(() => server.stats().batches === 6, { what: 'the held batch to be read' });
    for (let i = 0; i < 3; i++) {
      held.push(qp.post([faa(0)]));
      qp.flush();
    }
    await waitFor(() => server.stats().inFlightPeak >= 4, { what: 'the later batches to be read' });
    executor.release();
    expect((await Promise.all(held)).map((r) => r[0]?.value)).toEqual([5n, 6n, 7n, 8n]);
    expect(server.stats()).toMatchObject({ batches: 9, answeredInline: 5 });
    await qp.post([faa(0)]);
    expect(server.stats()).toMatchObject({ batches: 10, answeredInline: 6 });
  });

  it('refuses a post whole when the outstanding bound is reached', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address, { maxOutstandingRequests: 3 });
    executor.hold();
    const first = qp.post([faa(0), faa(0)]);
    const refused = await qp.post([faa(0), faa(0)]);
    expect(refused.map((c) => c.status)).toEqual(['unreachable', 'unreachable']);
    expect(refused[0]?.detail).toMatch(/2 outstanding work requests \(bound 3\)/);
    executor.release();
    expect((await first).map((c) => c.value)).toEqual([0n, 1n]);
    expect(qp.stats().refusedFull).toBe(2);
    expect(executor.batches.flatMap((b) => b.requests)).toHaveLength(2);
  });

  it('drains on close: batches already read are answered before the streams end', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);
    executor.hold();
    const post = qp.post([faa(0), faa(0)]);
    await waitFor(() => server.stats().batches === 1, { what: 'the batch to be in flight' });
    const closed = server.close();
    executor.release();
    expect((await post).map((c) => c.status)).toEqual(['ok', 'ok']);
    await closed;
    const [after] = await qp.post([faa(0)]);
    expect(after?.status).toBe('unreachable');
  });

  it('forces the shutdown when draining outlasts the grace period', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);
    executor.hold(); // never released before close: the executor "hangs"
    const post = qp.post([faa(0)]);
    await waitFor(() => server.stats().batches === 1, { what: 'the batch to be in flight' });
    await server.close({ graceMs: 50 });
    expect((await post)[0]?.status).toBe('unreachable');
    executor.release();
  });

  it('rejects locally what the wire cannot carry, and describes the memory node', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    const qp = await queuePair(server.address);
    const [negative, fine, farOffset] = await qp.post([faa(0, -1n), faa(0), { addr: { ...word(0), offset: -8 }, op: 'read', length: 8 }]);
    expect(negative?.status).toBe('bad-request');
    expect(negative?.detail).toMatch(/unsigned 128-bit/);
    expect(fine).toEqual({ status: 'ok', value: 0n });
    expect(farOffset?.status).toBe('bad-request');
    expect(executor.batches[0]?.requests).toHaveLength(1);
    // a good request before the bad one travels too
    const [good, bad] = await qp.post([faa(8), faa(8, -1n)]);
    expect(good).toEqual({ status: 'ok', value: 0n });
    expect(bad?.status).toBe('bad-request');
    expect(executor.batches[1]?.requests).toHaveLength(1);
    expect(await qp.post([])).toEqual([]);
    // every value of an atomic is checked, in order; a masked atomic's width first
    const big = 1n << 128n;
    const [badSwap, badWidth, badMask] = await qp.post([
      { addr: word(0), op: 'cas', compare: 0n, swap: big },
      { addr: word(0), op: 'masked-cas', width: 4 as 8, compare: 0n, swap: big, compareMask: 0n, swapMask: 0n },
      { addr: word(0), op: 'masked-faa', width: 8, add: 1n, boundaryMask: -1n },
    ]);
    expect(badSwap?.detail).toBe(`value ${big} is outside the unsigned 128-bit range the NIC accepts`);
    expect(badWidth?.detail).toBe('masked atomic width 4 is not 8 or 16');
    expect(badMask?.detail).toBe('value -1 is outside the unsigned 128-bit range the NIC accepts');
    expect(executor.batches).toHaveLength(2);

    expect(await qp.describe()).toEqual({ ...executor.describe(), incarnation: expect.any(Number) });
  });

  it('echoes bare frames on the same port (the floor a live bench divides by), executing nothing', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    expect(await grpcRoundTripUs(server.address, { messages: 20, warmup: 2 })).toBeGreaterThan(0);
    expect(await grpcStreamThroughput(server.address, { messages: 200, window: 8 })).toBeGreaterThan(0);
    expect(executor.batches).toHaveLength(0);
    expect(server.stats().batches).toBe(0);
  });

  it('fails connect with FabricAccessError when nothing listens', async () => {
    const executor = new FakeExecutor();
    const { server } = await serve(executor);
    server.kill();
    await expect(MemoryQueuePair.connect(server.address, 1, { connectTimeoutMs: 300 })).rejects.toThrow(/unreachable/);
  });
});
