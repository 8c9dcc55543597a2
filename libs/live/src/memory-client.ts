import { Client, Metadata, status, type ClientDuplexStream } from '@grpc/grpc-js';
import type { Completion, NodeId, PostOptions, SpanContextRef, WorkRequest } from '@lockfabric/ports';
import { FabricAccessError, errorMessage } from '@lockfabric/ports';
import {
  completionFromWire,
  decodeCompletionBatch,
  encodeWorkRequestBatch,
  decodeWire,
  DescribeResponseSchema,
  isU128,
  MemoryService,
  traceContextToWire,
  workRequestBatchToWire,
  workRequestToWire,
  type CompletionBatch as WireCompletionBatch,
  type WorkRequest as WireWorkRequest,
} from '@lockfabric/wire';
import { asUint8Array, rawMethodOf, toBuffer } from './grpc-raw.js';
import { clientChannelOptions, clientCredentials } from './tls/process-tls.js';
import { consoleLogger, type Logger } from './logger.js';
import { MalformedInputCounter } from './malformed-input.js';
import { memoryDescriptionFromWire, type MemoryDescription } from './memory-description.js';
import { INCARNATION_HEADER, STALE_INCARNATION } from './memory-incarnation.js';

export interface MemoryQueuePairOptions {
  readonly logger?: Logger;
  readonly malformed?: MalformedInputCounter;
  /** How long `connect` waits for the memory node before giving up. */
  readonly connectTimeoutMs?: number;
  /** HTTP/2 keepalive: a memory node that stops answering pings (paused, partitioned) breaks the stream. */
  readonly keepaliveMs?: number;
  /** Work requests per doorbell at most (a single larger post still goes as one). */
  readonly maxBatchRequests?: number;
  /**
   * Work requests posted and not yet completed, at most (a real queue pair's max_send_wr). A post
   * that would exceed it completes at once with 'unreachable', without being sent.
   */
  readonly maxOutstandingRequests?: number;
  readonly describeTimeoutMs?: number;
  /**
   * When set, a broken stream takes the queue pair down and it rebinds itself: it describes the
   * node again after `initialMs`, doubling up to `maxMs` between attempts, until the node answers
   * (under its old or a new incarnation). While down every post completes 'unreachable' at once,
   * without touching the network. Unset, a queue pair broken by a restart stays broken until the
   * owner calls `describe`.
   */
  readonly rebind?: RebindPolicy;
}

export interface RebindPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** Delay before rebind attempt `attempt` (0-based): doubles from `initialMs`, capped at `maxMs`. */
export function rebindDelayMs(policy: RebindPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
}

export interface MemoryQueuePairStats {
  readonly posts: number;
  readonly doorbells: number;
  readonly requestsSent: number;
  readonly completed: number;
  /** Work requests completed 'unreachable' because their stream broke or could not open. */
  readonly unreachable: number;
  /** Work requests answered 'bad-request' locally: their values cannot be encoded. */
  readonly rejectedLocally: number;
  /** Work requests refused because maxOutstandingRequests were already outstanding. */
  readonly refusedFull: number;
  readonly streamsOpened: number;
  /** Times a broken stream took the queue pair down (only with `rebind`). */
  readonly downs: number;
  /** Describes sent to bring the queue pair back, and how many of them failed. */
  readonly rebindAttempts: number;
  readonly rebindFailures: number;
  /** Rebinds that found a new incarnation (the node restarted, its table is new). */
  readonly incarnationChanges: number;
}

interface PendingPost {
  readonly completions: Completion[];
  remaining: number;
  readonly resolve: (completions: Completion[]) => void;
  /** The poster's `settled` callback, called once just before `resolve`. */
  readonly settled: (() => void) | undefined;
}

interface Outstanding {
  readonly post: PendingPost;
  readonly index: number;
}

const connectMethod = rawMethodOf(MemoryService.method.connect);
const describeMethod = rawMethodOf(MemoryService.method.describe);
const U32_MAX = 0xffff_ffff;

/**
 * One queue pair onto one memory node: a MemoryService.Connect stream. Posts made in the same
 * event-loop turn share one WorkRequestBatch (the doorbell); completions are matched by id and
 * posts resolve in order. A broken stream completes every outstanding request 'unreachable' —
 * its outcome is unknown, as with a real RC queue pair in the error state — and the next post
 * opens a new stream. `post` never rejects.
 */
export class MemoryQueuePair {
  private readonly client: Client;
  private readonly logger: Logger;
  private readonly malformed: MalformedInputCounter;
  private readonly maxBatchRequests: number;
  private readonly maxOutstanding: number;
  private readonly describeTimeoutMs: number;
  private call: ClientDuplexStream<Uint8Array, Uint8Array> | undefined;
  private readonly source: string;
  private lastId = 0;
  private readonly outstanding = new Map<number, Outstanding>();
  /** Ids of each doorbell written and not yet answered, oldest first: the server answers in order. */
  private readonly frames: number[][] = [];
  private pending: WireWorkRequest[] = [];
  private pendingTrace: SpanContextRef | undefined;
  private flushScheduled: ReturnType<typeof setImmediate> | undefined;
  private closed = false;
  /** The memory-node incarnation this queue pair is bound to (learned by describe). */
  private incarnation: number | undefined;
  /** Set when the node restarted under this queue pair: why every post now fails. */
  private broken: string | undefined;
  private counters = { posts: 0, doorbells: 0, requestsSent: 0, completed: 0, unreachable: 0, rejectedLocally: 0, refusedFull: 0, streamsOpened: 0, downs: 0, rebindAttempts: 0, rebindFailures: 0, incarnationChanges: 0 };
  private readonly rebind: RebindPolicy | undefined;
  /** Set while a rebind is under way: why posts fail now. */
  private down: string | undefined;
  private rebindTimer: ReturnType<typeof setTimeout> | undefined;
  /** Woken when the queue pair comes back up (or closes). */
  private upWaiters: (() => void)[] = [];

  private constructor(
    readonly address: string,
    readonly initiator: NodeId,
    options: MemoryQueuePairOptions,
  ) {
    const keepaliveMs = options.keepaliveMs ?? 10_000;
    this.client = new Client(address, clientCredentials(), clientChannelOptions({
      'grpc.keepalive_time_ms': keepaliveMs,
      'grpc.keepalive_timeout_ms': keepaliveMs,
      'grpc.keepalive_permit_without_calls': 1,
      // A restarted memory node should be found again within about a second.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
    }));
    this.logger = options.logger ?? consoleLogger;
    this.malformed = options.malformed ?? new MalformedInputCounter({ logger: this.logger });
    this.maxBatchRequests = Math.max(1, options.maxBatchRequests ?? 512);
    this.maxOutstanding = Math.max(1, options.maxOutstandingRequests ?? 16_384);
    this.describeTimeoutMs = options.describeTimeoutMs ?? 5_000;
    this.source = `grpc ${connectMethod.path} from ${address}`;
    this.rebind = options.rebind;
  }

  /** Opens a queue pair once the memory node at `address` (`host:port`) accepts connections. */
  static async connect(address: string, initiator: NodeId, options: MemoryQueuePairOptions = {}): Promise<MemoryQueuePair> {
    const qp = new MemoryQueuePair(address, initiator, options);
    const timeoutMs = options.connectTimeoutMs ?? 5_000;
    try {
      await new Promise<void>((resolve, reject) => qp.client.waitForReady(Date.now() + timeoutMs, (error) => (error ? reject(error) : resolve())));
    } catch (error) {
      qp.client.close();
      throw new FabricAccessError('unreachable', `memory node ${address} did not accept a connection within ${timeoutMs} ms: ${errorMessage(error)}`);
    }
    return qp;
  }

  stats(): MemoryQueuePairStats {
    return { ...this.counters };
  }

  /** The memory-node incarnation this queue pair is bound to; undefined before describe or when the node does not say. */
  get boundIncarnation(): number | undefined {
    return this.incarnation;
  }

  /** False while the queue pair is down (rebinding) or broken by a restart. */
  get up(): boolean {
    return !this.closed && this.down === undefined && this.broken === undefined;
  }

  /** Resolves when the queue pair is up again or closed, or after `maxWaitMs`. */
  whenUp(maxWaitMs: number): Promise<void> {
    if (this.up || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, maxWaitMs);
      const waiters = this.upWaiters;
      function done() {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      // Bounded: one entry per waiting client, each removed by its own timeout at the latest.
      waiters.push(done);
    });
  }

  /**
   * Posts a batch; the promise resolves with its completions, in order. `settled`, when given, is
   * called once, just before the promise resolves (at once when the post completes without being
   * sent): a caller that only counts batches in flight needs no reaction of its own on the promise.
   */
  post(batch: readonly WorkRequest[], options: PostOptions = NO_OPTIONS, settled?: () => void): Promise<Completion[]> {
    this.counters.posts++;
    if (batch.length === 0) return settledNow(settled, []);
    if (this.closed) return settledNow(settled, batch.map(() => ({ status: 'unreachable', detail: 'queue pair is closed' })));
    const broken = this.broken ?? this.down;
    if (broken !== undefined) {
      this.counters.unreachable += batch.length;
      return settledNow(settled, batch.map(() => ({ status: 'unreachable' as const, detail: broken })));
    }

    let resolve!: (completions: Completion[]) => void;
    const done = new Promise<Completion[]>((r) => (resolve = r));
    const post: PendingPost = { completions: new Array<Completion>(batch.length), remaining: batch.length, resolve, settled };
    // Indexes of the requests that can travel; undefined while that is all of them (the usual case).
    let sendable: number[] | undefined;
    for (let index = 0; index < batch.length; index++) {
      const problem = encodingProblem(batch[index] as WorkRequest);
      if (problem === undefined) {
        sendable?.push(index);
        continue;
      }
      sendable ??= Array.from({ length: index }, (_, i) => i);
      this.counters.rejectedLocally++;
      post.completions[index] = { status: 'bad-request', detail: problem };
      post.remaining--;
    }
    const count = sendable?.length ?? batch.length;
    if (post.remaining === 0) {
      settled?.();
      resolve(post.completions);
      return done;
    }
    if (this.outstanding.size + count > this.maxOutstanding) {
      // Overflow policy: refuse the newest post whole, so no post is half executed.
      this.counters.refusedFull += count;
      const detail = `queue pair to ${this.address} already has ${this.outstanding.size} outstanding work requests (bound ${this.maxOutstanding})`;
      for (let k = 0; k < count; k++) post.completions[sendable?.[k] ?? k] = { status: 'unreachable', detail };
      settled?.();
      resolve(post.completions);
      return done;
    }

    // One post stays in one doorbell: flush what is queued if this post would not fit with it.
    if (this.pending.length > 0 && this.pending.length + count > this.maxBatchRequests) this.flush();
    // Only a sampled context goes on the wire: under an unsampled one the memory node starts no
    // span, and encoding it (a traceparent per verb) cost both ends processor time for nothing.
    const trace = options.trace !== undefined && (options.trace.traceFlags & TRACE_FLAG_SAMPLED) !== 0 ? options.trace : undefined;
    if (this.pending.length === 0) this.pendingTrace = trace;
    else if (trace === undefined && this.pendingTrace !== undefined) this.unshareBatchTrace();
    const ownTrace = trace !== undefined && !sameSpan(trace, this.pendingTrace) ? trace : undefined;
    for (let k = 0; k < count; k++) {
      const index = sendable?.[k] ?? k;
      const id = this.nextId();
      this.outstanding.set(id, { post, index });
      this.pending.push(workRequestToWire(batch[index] as WorkRequest, id, ownTrace));
    }
    if (this.pending.length >= this.maxBatchRequests) this.flush();
    else this.flushScheduled ??= setImmediate(() => this.flush());
    return done;
  }

  /**
   * The memory node's regions and lock tables; binds the queue pair to the incarnation it describes
   * (a queue pair broken by a restart works again after a new describe). Throws
   * FabricAccessError('unreachable') on failure.
   */
  describe(): Promise<MemoryDescription> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        describeMethod.path,
        toBuffer,
        asUint8Array,
        new Uint8Array(),
        { deadline: Date.now() + this.describeTimeoutMs },
        (error, bytes) => {
          if (error || bytes === undefined) {
            reject(new FabricAccessError('unreachable', `describe of memory node ${this.address} failed: ${error?.message ?? 'no response'}`));
            return;
          }
          try {
            const description = memoryDescriptionFromWire(decodeWire(DescribeResponseSchema, bytes, `grpc ${describeMethod.path} from ${this.address}`));
            this.bind(description.incarnation);
            resolve(description);
          } catch (decodeError) {
            this.malformed.record(describeMethod.path, decodeError, this.address);
            reject(decodeError);
          }
        },
      );
    });
  }

  /** Completes everything outstanding 'unreachable' and closes the connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.rebindTimer !== undefined) clearTimeout(this.rebindTimer);
    this.wakeUpWaiters();
    if (this.flushScheduled !== undefined) clearImmediate(this.flushScheduled);
    const unsent = this.pending.splice(0);
    for (const request of unsent) this.complete(request.id, { status: 'unreachable', detail: 'queue pair closed before the request was sent' });
    const call = this.call;
    this.breakStream('queue pair closed');
    call?.end();
    this.client.close();
  }

  /** Writes the queued work requests as one doorbell. */
  flush(): void {
    if (this.flushScheduled !== undefined) clearImmediate(this.flushScheduled);
    this.flushScheduled = undefined;
    if (this.pending.length === 0) return;
    const requests = this.pending;
    const trace = this.pendingTrace;
    this.pending = [];
    this.pendingTrace = undefined;
    const call = this.ensureCall();
    this.frames.push(requests.map((request) => request.id));
    this.counters.doorbells++;
    this.counters.requestsSent += requests.length;
    call.write(encodeWorkRequestBatch(workRequestBatchToWire(this.initiator, requests, trace)));
  }

  /**
   * A verb without a trace context inherits the doorbell's: before an untraced post joins, the
   * queued requests that relied on it carry it each, and the doorbell carries none.
   */
  private unshareBatchTrace(): void {
    const shared = traceContextToWire(this.pendingTrace);
    for (const request of this.pending) request.trace ??= shared;
    this.pendingTrace = undefined;
  }

  private nextId(): number {
    // Wraps within uint32 and skips 0, which the server uses to answer an undecodable frame.
    do this.lastId = this.lastId >= U32_MAX ? 1 : this.lastId + 1;
    while (this.outstanding.has(this.lastId));
    return this.lastId;
  }

  private ensureCall(): ClientDuplexStream<Uint8Array, Uint8Array> {
    if (this.call) return this.call;
    const metadata = new Metadata();
    if (this.incarnation !== undefined) metadata.set(INCARNATION_HEADER, String(this.incarnation));
    const call = this.client.makeBidiStreamRequest(connectMethod.path, toBuffer, asUint8Array, metadata);
    this.counters.streamsOpened++;
    this.call = call;
    call.on('data', (bytes: Uint8Array) => this.onCompletions(call, bytes));
    call.on('error', (error: Error & { code?: number; details?: string }) => {
      if (this.call !== call) return;
      if (error.code === status.FAILED_PRECONDITION && error.details?.startsWith(STALE_INCARNATION)) {
        if (this.rebind) return this.goDown(`${error.details}; rebinding`);
        // The node restarted under us: like a QP whose peer reset, this one stays broken until rebound.
        this.broken = `${error.details}; describe it again to bind a new queue pair`;
        this.breakStream(this.broken);
        return;
      }
      const detail = `memory node ${this.address} unreachable: ${error.message}`;
      if (this.rebind) this.goDown(detail);
      else this.breakStream(detail);
    });
    call.on('end', () => {
      if (this.call !== call) return;
      const detail = `memory node ${this.address} ended the stream`;
      if (this.rebind) this.goDown(detail);
      else this.breakStream(detail);
    });
    return call;
  }

  private onCompletions(call: ClientDuplexStream<Uint8Array, Uint8Array>, bytes: Uint8Array): void {
    if (this.call !== call) return;
    let batch: WireCompletionBatch;
    try {
      batch = decodeCompletionBatch(bytes, this.source);
    } catch (error) {
      // Matching is lost: drop the stream rather than guess which requests were answered.
      this.malformed.record(this.source, error, this.address);
      call.cancel();
      this.breakStream(`memory node ${this.address} sent an undecodable completion batch`);
      return;
    }
    const frame = this.frames.shift();
    if (frame === undefined) {
      this.malformed.record(this.source, 'completion batch for no outstanding doorbell', this.address);
      return;
    }
    const first = batch.completions[0];
    if (first !== undefined && first.id === 0) {
      // The memory node could not decode the doorbell at all: every request of it gets that answer.
      const answer = this.fromWire(first);
      for (const id of frame) this.complete(id, answer);
      return;
    }
    const completions = batch.completions;
    for (let i = 0; i < completions.length; i++) {
      const wire = completions[i]!;
      // The server answers a doorbell's requests in order: the i-th answer is normally the i-th id,
      // so only an out-of-order answer pays for a search of the frame.
      if (!this.outstanding.has(wire.id) || (frame[i] !== wire.id && !frame.includes(wire.id))) {
        this.malformed.record(this.source, `completion for unknown work request ${wire.id}`, this.address);
        continue;
      }
      this.complete(wire.id, this.fromWire(wire));
    }
    for (const id of frame) if (this.outstanding.has(id)) this.complete(id, { status: 'bad-request', detail: 'the memory node did not answer this work request' });
  }

  private fromWire(wire: WireCompletionBatch['completions'][number]): Completion {
    try {
      return completionFromWire(wire, this.source);
    } catch (error) {
      this.malformed.record(this.source, error, this.address);
      return { status: 'bad-request', detail: errorMessage(error) };
    }
  }

  private complete(id: number, completion: Completion): void {
    const entry = this.outstanding.get(id);
    if (entry === undefined) return;
    this.outstanding.delete(id);
    this.counters.completed++;
    if (completion.status === 'unreachable') this.counters.unreachable++;
    const post = entry.post;
    post.completions[entry.index] = completion;
    if (--post.remaining === 0) {
      post.settled?.();
      post.resolve(post.completions);
    }
  }

  /** Binds to `incarnation` (undefined: the server did not say, so nothing is checked). */
  private bind(incarnation: number | undefined): void {
    const next = incarnation === 0 ? undefined : incarnation;
    if (next !== this.incarnation) {
      const detail = `memory node ${this.address} rebound to incarnation ${String(next)}`;
      // Neither the old binding's stream nor its queued, unsent requests may reach the new table.
      this.call?.cancel();
      this.breakStream(detail);
      this.failUnsent(detail);
      if (this.incarnation !== undefined) this.counters.incarnationChanges++;
    }
    this.incarnation = next;
    this.broken = undefined;
    if (this.down !== undefined) {
      // Whoever described the node (the rebind timer, or a run starting) brought the queue pair back.
      this.down = undefined;
      if (this.rebindTimer !== undefined) clearTimeout(this.rebindTimer);
      this.rebindTimer = undefined;
      this.wakeUpWaiters();
    }
  }

  /**
   * The stream broke: fail what was written and what is queued, refuse posts, and describe the node
   * again with exponential backoff until it answers. Never more than one rebind is under way.
   */
  private goDown(detail: string): void {
    this.breakStream(detail);
    this.failUnsent(detail);
    if (this.closed || this.down !== undefined) return;
    this.counters.downs++;
    this.down = `${detail} (queue pair down, rebinding)`;
    this.logger.warn(`memory queue pair: ${detail}; rebinding with backoff`);
    this.scheduleRebind(0);
  }

  private scheduleRebind(attempt: number): void {
    const policy = this.rebind;
    if (!policy || this.closed) return;
    this.rebindTimer = setTimeout(() => {
      this.rebindTimer = undefined;
      this.counters.rebindAttempts++;
      this.describe().then(
        (description) => this.logger.info(`memory queue pair: memory node ${this.address} is back (incarnation ${String(description.incarnation)}) after ${attempt + 1} attempt(s)`),
        () => {
          this.counters.rebindFailures++;
          if (this.down !== undefined) this.scheduleRebind(attempt + 1);
        },
      );
    }, rebindDelayMs(policy, attempt));
  }

  private wakeUpWaiters(): void {
    const waiters = this.upWaiters;
    this.upWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Completes the queued, not yet written requests 'unreachable'. */
  private failUnsent(detail: string): void {
    if (this.flushScheduled !== undefined) clearImmediate(this.flushScheduled);
    this.flushScheduled = undefined;
    const unsent = this.pending.splice(0);
    this.pendingTrace = undefined;
    for (const request of unsent) this.complete(request.id, { status: 'unreachable', detail });
  }

  /** Forgets the current stream; every request written on it completes 'unreachable'. */

  private breakStream(detail: string): void {
    const call = this.call;
    this.call = undefined;
    if (call) call.on('error', () => {}); // late errors of a stream we gave up on are expected
    const frames = this.frames.splice(0);
    if (frames.length > 0) this.logger.warn(`memory queue pair: ${detail}; ${frames.reduce((n, f) => n + f.length, 0)} work requests complete unreachable`);
    const answer: Completion = { status: 'unreachable', detail };
    for (const frame of frames) for (const id of frame) this.complete(id, answer);
  }
}

/** W3C trace-flags bit 0: the head sampler sampled the trace. */
const TRACE_FLAG_SAMPLED = 0x01;

const NO_OPTIONS: PostOptions = {};

/** A post answered without the network: `settled` first, as for a sent one. */
function settledNow(settled: (() => void) | undefined, completions: Completion[]): Promise<Completion[]> {
  settled?.();
  return Promise.resolve(completions);
}

function sameSpan(a: SpanContextRef, b: SpanContextRef | undefined): boolean {
  return b !== undefined && a.spanId === b.spanId && a.traceId === b.traceId;
}

function isU32(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= U32_MAX;
}

/**
 * Why a work request cannot travel, or undefined. The wire carries unsigned 128-bit values and
 * 32-bit ids; a value outside those would otherwise be silently changed, so such requests complete
 * 'bad-request' here — the status the NIC gives negative or oversized values.
 */
function encodingProblem(wr: WorkRequest): string | undefined {
  const { node, region, rkey, offset } = wr.addr;
  if (!isU32(node) || !isU32(region) || !isU32(rkey)) return `node, region and rkey must be unsigned 32-bit integers (got ${node}, ${region}, ${rkey})`;
  if (!Number.isSafeInteger(offset) || offset < 0) return `offset ${offset} is not a non-negative integer`;
  if (wr.lock !== undefined && !isU32(wr.lock)) return `lock ${wr.lock} is not an unsigned 32-bit integer`;
  // The values are checked in place, first bad one first: no array per verb on the post path.
  switch (wr.op) {
    case 'read':
      return isU32(wr.length) ? undefined : `read length ${wr.length} is not an unsigned 32-bit integer`;
    case 'write':
      return undefined;
    case 'cas':
      return badValue(wr.compare) ?? badValue(wr.swap);
    case 'faa':
      return badValue(wr.add);
    case 'masked-cas':
      return maskedWidthProblem(wr.width) ?? badValue(wr.compare) ?? badValue(wr.swap) ?? badValue(wr.compareMask) ?? badValue(wr.swapMask);
    case 'masked-faa':
      return maskedWidthProblem(wr.width) ?? badValue(wr.add) ?? badValue(wr.boundaryMask);
  }
  return undefined;
}

function maskedWidthProblem(width: number): string | undefined {
  return width !== 8 && width !== 16 ? `masked atomic width ${String(width)} is not 8 or 16` : undefined;
}

function badValue(value: bigint): string | undefined {
  return isU128(value) ? undefined : `value ${value} is outside the unsigned 128-bit range the NIC accepts`;
}
