import { toBinary } from '@bufbuild/protobuf';
import { status, type sendUnaryData, type ServerDuplexStream, type ServerUnaryCall } from '@grpc/grpc-js';
import type { Completion, NodeId, SpanContextRef, WorkRequest } from '@lockfabric/ports';
import { DescribeResponseSchema, MemoryService } from '@lockfabric/wire';
import { DoorbellAnswerer } from './memory-answer.js';
import { rawMethodOf } from './grpc-raw.js';
import { echoMethod, echoStream } from './raw-transport.js';
import { guardedServer } from './tls/process-tls.js';
import type { MethodRule } from './tls/access-policy.js';
import { grpcError } from './grpc-unary.js';
import { INCARNATION_HEADER, STALE_INCARNATION } from './memory-incarnation.js';
import { consoleLogger, type Logger } from './logger.js';
import { MalformedInputCounter } from './malformed-input.js';
import { memoryDescriptionToWire, type MemoryDescription } from './memory-description.js';
import { errorMessage } from '@lockfabric/ports';

/** Trace context of a batch: the batch's own, and per request where it differs (see verbs.proto). */
export interface ExecuteContext {
  readonly trace?: SpanContextRef;
  /** Same length as the batch; undefined entries inherit `trace`. */
  readonly requestTraces?: readonly (SpanContextRef | undefined)[];
}

/**
 * What serves the verbs: the fabric library's Nic satisfies it. It gets decoded port work requests
 * and returns one completion per request, in order; errors are completions, never exceptions.
 */
export interface MemoryExecutor {
  executeBatch(batch: readonly WorkRequest[], initiator: NodeId, context?: ExecuteContext): Completion[] | Promise<Completion[]>;
  describe(): MemoryDescription;
}

export interface MemoryServerOptions {
  readonly executor: MemoryExecutor;
  /** 0 (the default) picks a free port; `port` on the handle says which. */
  readonly port?: number;
  readonly host?: string;
  /**
   * Batches of one stream received but not yet answered (executing or waiting to be written).
   * At the bound the server stops reading that stream, so a fast client meets HTTP/2 flow control
   * instead of growing our memory.
   */
  readonly maxInFlightBatches?: number;
  readonly logger?: Logger;
  readonly malformed?: MalformedInputCounter;
  /** This process's incarnation, told by Describe and checked on Connect (default: start time, ms). */
  readonly incarnation?: number;
  /** Who may call it (default ACCESS_POLICY; compute nodes' descriptor slots: DESCRIPTOR_ACCESS_POLICY). */
  readonly policy?: Readonly<Record<string, MethodRule>>;
  /** Mutant (tests, old-build measurements): every frame decoded and encoded through the generated message shapes. */
  readonly mutantGeneralPath?: boolean;
}

export interface MemoryServerStats {
  readonly streamsOpened: number;
  readonly streamsActive: number;
  readonly batches: number;
  readonly requests: number;
  readonly malformedFrames: number;
  readonly malformedRequests: number;
  readonly executorErrors: number;
  /** Most batches one stream has had unanswered at once (never above maxInFlightBatches). */
  readonly inFlightPeak: number;
  /** Connect streams refused because their queue pair was bound to an earlier incarnation. */
  readonly staleStreams: number;
  /**
   * Batches answered in the turn they arrived: decoded, executed and written with no promise in
   * between (the executor answered at once and nothing of the stream was pending).
   */
  readonly answeredInline: number;
}

export interface MemoryServer {
  readonly port: number;
  /** `host:port` for clients on this machine. */
  readonly address: string;
  stats(): MemoryServerStats;
  /**
   * Drains: stops reading new batches, answers those already read, ends every stream, then shuts
   * the server down — forcibly once `graceMs` has passed.
   */
  close(options?: { graceMs?: number }): Promise<void>;
  /** Drops every connection at once, as a crashed memory node would. */
  kill(): void;
}

const connectMethod = rawMethodOf(MemoryService.method.connect);
const describeMethod = rawMethodOf(MemoryService.method.describe);
const SOURCE = `grpc ${connectMethod.path}`;

/** Serves MemoryService (Connect, Describe) on a real port over an injected executor. */
export async function startMemoryServer(options: MemoryServerOptions): Promise<MemoryServer> {
  const executor = options.executor;
  const logger = options.logger ?? consoleLogger;
  const malformed = options.malformed ?? new MalformedInputCounter({ logger });
  const maxInFlight = Math.max(1, options.maxInFlightBatches ?? 64);
  const streams = new Set<QueuePairStream>();
  const counters = { streamsOpened: 0, batches: 0, requests: 0, malformedFrames: 0, malformedRequests: 0, executorErrors: 0, inFlightPeak: 0, staleStreams: 0, answeredInline: 0 };
  const incarnation = options.incarnation ?? Date.now();
  let closing = false;
  const answerer = new DoorbellAnswerer({ executor, counters, malformed, logger, source: SOURCE, mutantGeneralPath: options.mutantGeneralPath });

  const { server, credentials } = guardedServer({ 'grpc.keepalive_permit_without_calls': 1 }, options.policy);
  server.addService(
    { connect: connectMethod, describe: describeMethod, echo: echoMethod },
    {
      connect: (call: ServerDuplexStream<Uint8Array, Uint8Array>) => {
        if (closing) {
          call.end();
          return;
        }
        // A queue pair bound to an earlier incarnation must not reach this table: its requests were
        // meant for memory that is gone (the lock table restarted empty).
        const bound = call.metadata.get(INCARNATION_HEADER)[0];
        if (bound !== undefined && String(bound) !== String(incarnation)) {
          counters.staleStreams++;
          call.emit('error', grpcError(status.FAILED_PRECONDITION, `${STALE_INCARNATION}: queue pair bound to incarnation ${String(bound)}, memory node ${executor.describe().node} is incarnation ${incarnation}`));
          return;
        }
        counters.streamsOpened++;
        const peer = call.getPeer();
        const stream = new QueuePairStream(call, maxInFlight, (frame) => answerer.answer(frame, peer), logger, (inFlight) => {
          counters.inFlightPeak = Math.max(counters.inFlightPeak, inFlight);
        }, () => counters.answeredInline++);
        streams.add(stream);
        void stream.finished.then(() => streams.delete(stream));
      },
      // The bare stream round trip to this very process, which a live bench divides protocol latency by.
      echo: echoStream,
      describe: (_call: ServerUnaryCall<Uint8Array, Uint8Array>, callback: sendUnaryData<Uint8Array>) => {
        try {
          callback(null, toBinary(DescribeResponseSchema, memoryDescriptionToWire({ ...executor.describe(), incarnation })));
        } catch (error) {
          logger.error(`memory server: describe failed: ${errorMessage(error)}`);
          callback({ code: status.INTERNAL, details: 'describe failed' });
        }
      },
    },
  );

  const host = options.host ?? '0.0.0.0';
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port ?? 0}`, credentials, (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  const localHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;

  return {
    port,
    address: `${localHost}:${port}`,
    stats: () => ({ ...counters, streamsActive: streams.size }),
    async close({ graceMs = 5_000 } = {}) {
      if (closing) return;
      closing = true;
      const graceful = (async () => {
        await Promise.all([...streams].map((stream) => stream.drainAndEnd()));
        await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        return true;
      })();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
      // An executor that never answers must not keep a terminating pod alive past its grace.
      if (!(await Promise.race([graceful, expired]))) server.forceShutdown();
      clearTimeout(timer);
    },
    kill() {
      closing = true;
      server.forceShutdown();
    },
  };
}

/**
 * One Connect call: frames are answered strictly in order (a queue pair is in-order), at most
 * `maxInFlight` unanswered at a time.
 */
class QueuePairStream {
  readonly finished: Promise<void>;
  private tail: Promise<void> = Promise.resolve();
  /** Frames on the promise chain (their executor answered later): later frames queue behind them. */
  private waiting = 0;
  private inFlight = 0;
  private paused = false;
  private draining = false;
  private ended = false;

  constructor(
    private readonly call: ServerDuplexStream<Uint8Array, Uint8Array>,
    private readonly maxInFlight: number,
    private readonly answer: (frame: Uint8Array) => Uint8Array | Promise<Uint8Array>,
    private readonly logger: Logger,
    private readonly onInFlight: (inFlight: number) => void,
    private readonly onInline: () => void,
  ) {
    let finish!: () => void;
    this.finished = new Promise((resolve) => (finish = resolve));
    call.on('data', (frame: Uint8Array) => this.onFrame(frame));
    // The client half-closed: answer what was read, then end our half.
    call.on('end', () => void this.drainAndEnd());
    call.on('error', (error: Error) => {
      this.logger.warn(`memory server: stream from ${call.getPeer()} failed: ${error.message}`);
      this.ended = true;
    });
    call.on('close', () => {
      this.ended = true;
      finish();
    });
    call.on('cancelled', () => {
      this.ended = true;
      finish();
    });
  }

  private onFrame(frame: Uint8Array): void {
    if (this.draining) return;
    this.inFlight++;
    this.onInFlight(this.inFlight);
    if (this.inFlight >= this.maxInFlight && !this.paused) {
      this.paused = true;
      this.call.pause();
    }
    if (this.waiting === 0) {
      // Nothing of this stream is pending: answer now, in this turn, with no promise in between.
      let bytes: Uint8Array | Promise<Uint8Array>;
      try {
        bytes = this.answer(frame);
      } catch (error) {
        this.logger.error(`memory server: could not answer a batch: ${errorMessage(error)}`);
        this.settle();
        return;
      }
      if (!(bytes instanceof Promise)) {
        this.onInline();
        this.writeOut(bytes, () => this.settle());
        return;
      }
      this.chain(() => bytes);
      return;
    }
    // An earlier frame is still executing: queue behind it (a queue pair answers in order).
    this.chain(() => this.answer(frame));
  }

  private chain(answer: () => Uint8Array | Promise<Uint8Array>): void {
    this.waiting++;
    this.tail = this.tail
      .then(answer)
      .then((bytes) => new Promise<void>((resolve) => this.writeOut(bytes, resolve)))
      .catch((error: unknown) => this.logger.error(`memory server: could not answer a batch: ${errorMessage(error)}`))
      .finally(() => {
        this.waiting--;
        this.settle();
      });
  }

  /** Writes an answer; `done` runs once it is written out (or the stream ended). */
  private writeOut(bytes: Uint8Array, done: () => void): void {
    if (this.ended) return done();
    // Counted as in flight until written out, so a slow reader also applies backpressure.
    this.call.write(bytes, () => done());
  }

  private settle(): void {
    this.inFlight--;
    if (this.paused && !this.draining && this.inFlight < this.maxInFlight) {
      this.paused = false;
      this.call.resume();
    }
  }

  /** Stops taking frames, answers the ones already taken, and ends the response stream. */
  async drainAndEnd(): Promise<void> {
    if (this.draining) return this.tail;
    this.draining = true;
    this.call.pause();
    // A call that died mid-write may never call back; its close ends the wait instead.
    await Promise.race([this.tail, this.finished]);
    if (!this.ended) {
      this.ended = true;
      this.call.end();
    }
  }
}
