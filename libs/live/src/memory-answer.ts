import type { Completion, SpanContextRef, WorkRequest } from '@lockfabric/ports';
import { errorMessage } from '@lockfabric/ports';
import {
  completionBatchToWire,
  completionToWire,
  decodeDoorbell,
  decodeWorkRequestBatch,
  encodeCompletionBatch,
  encodeCompletions,
  traceContextFromWire,
  workRequestFromWire,
  workRequestTrace,
  type Completion as WireCompletion,
  type WorkRequestBatch as WireWorkRequestBatch,
} from '@lockfabric/wire';
import type { Logger } from './logger.js';
import type { MalformedInputCounter } from './malformed-input.js';
import type { ExecuteContext, MemoryExecutor } from './memory-server.js';

/** The server's counters this module adds to (see MemoryServerStats). */
export interface AnswerCounters {
  batches: number;
  requests: number;
  malformedFrames: number;
  malformedRequests: number;
  executorErrors: number;
}

export interface DoorbellAnswererOptions {
  readonly executor: MemoryExecutor;
  readonly counters: AnswerCounters;
  readonly malformed: MalformedInputCounter;
  readonly logger: Logger;
  /** Name of the input in malformed-input records and details. */
  readonly source: string;
  /** Mutant (tests, old-build measurements): every frame the general way, through the generated message shapes. */
  readonly mutantGeneralPath?: boolean;
}

/**
 * Answers a queue pair's frames: one WorkRequestBatch in, its CompletionBatch out. A frame of the
 * common shape (every request valid, every field known) is read straight into port work requests
 * and its completions written straight out (libs/wire doorbell.ts); any other frame takes the
 * general way, the one that reports malformed frames and requests, so both give the same answer.
 */
export class DoorbellAnswerer {
  /** Frames that took the general way (malformed input, unusual encodings, the mutant). */
  generalFrames = 0;
  readonly #o: DoorbellAnswererOptions;

  constructor(options: DoorbellAnswererOptions) {
    this.#o = options;
  }

  /**
   * The encoded CompletionBatch answering one frame: at once when the executor answers at once (the
   * NIC does; an IOPS cap may make it wait). Every failure to decode or execute is a status; only a
   * completion the general encoder refuses (unknown status, a value beyond 128 bits) throws or
   * rejects, as it always did.
   */
  answer(frame: Uint8Array, peer: string): Uint8Array | Promise<Uint8Array> {
    const doorbell = this.#o.mutantGeneralPath ? undefined : decodeDoorbell(frame);
    if (doorbell === undefined) return this.#answerGeneral(frame, peer);
    const { requests, ids } = doorbell;
    const counters = this.#o.counters;
    counters.batches++;
    counters.requests += requests.length;
    const count = requests.length;
    let executed: Completion[] | Promise<Completion[]>;
    try {
      // The general path's context, less the list of per-request traces when no request has one
      // (absent entries inherit the batch's: ExecuteContext); none at all when nothing is traced.
      const { trace, requestTraces } = doorbell;
      const context: ExecuteContext | undefined = trace === undefined && requestTraces === undefined ? undefined : { ...(trace !== undefined ? { trace } : {}), ...(requestTraces !== undefined ? { requestTraces } : {}) };
      executed = count === 0 ? [] : this.#o.executor.executeBatch(requests, doorbell.initiator, context);
    } catch (error) {
      executed = this.#failed(error, count);
    }
    if (executed instanceof Promise) {
      return executed.then((completions) => this.#checked(completions, count), (error: unknown) => this.#failed(error, count)).then((completions) => replyTo(ids, completions));
    }
    return replyTo(ids, this.#checked(executed, count));
  }

  #failed(error: unknown, count: number): Completion[] {
    this.#o.counters.executorErrors++;
    const detail = `memory node failed to execute the batch: ${errorMessage(error)}`;
    this.#o.logger.error(`memory server: ${detail}`);
    const out = new Array<Completion>(count);
    for (let i = 0; i < count; i++) out[i] = { status: 'bad-request', detail };
    return out;
  }

  #checked(completions: Completion[], count: number): Completion[] {
    return completions.length === count ? completions : this.#failed(`executor returned ${completions.length} completions for ${count} work requests`, count);
  }

  /** Every frame, malformed ones included, through the generated message shapes. */
  #answerGeneral(frame: Uint8Array, peer: string): Uint8Array | Promise<Uint8Array> {
    this.generalFrames++;
    const { counters, malformed, source } = this.#o;
    let batch: WireWorkRequestBatch;
    try {
      batch = decodeWorkRequestBatch(frame, source);
    } catch (error) {
      counters.malformedFrames++;
      malformed.record(source, error, peer);
      const detail = errorMessage(error);
      return encode([completionToWire({ status: 'bad-request', detail }, 0)]);
    }
    counters.batches++;
    counters.requests += batch.requests.length;

    // Requests that do not decode complete as bad-request in their place; the rest run in order.
    const answers: (WireCompletion | undefined)[] = [];
    const runnable: WorkRequest[] = [];
    const requestTraces: (SpanContextRef | undefined)[] = [];
    for (const wire of batch.requests) {
      try {
        runnable.push(workRequestFromWire(wire, source));
        requestTraces.push(workRequestTrace(wire));
        answers.push(undefined);
      } catch (error) {
        counters.malformedRequests++;
        malformed.record(source, error, peer);
        const detail = errorMessage(error);
        answers.push(completionToWire({ status: 'bad-request', detail }, wire.id));
      }
    }

    const count = runnable.length;
    let executed: Completion[] | Promise<Completion[]>;
    try {
      const trace = traceContextFromWire(batch.trace);
      const context: ExecuteContext = { ...(trace ? { trace } : {}), requestTraces };
      executed = count === 0 ? [] : this.#o.executor.executeBatch(runnable, batch.initiator, context);
    } catch (error) {
      executed = this.#failed(error, count);
    }
    if (executed instanceof Promise) {
      return executed.then((completions) => this.#checked(completions, count), (error: unknown) => this.#failed(error, count)).then((completions) => reply(batch, answers, completions));
    }
    return reply(batch, answers, this.#checked(executed, count));
  }
}

/** The answer to a frame read by decodeDoorbell: written straight out, or the general way for completions it does not take. */
function replyTo(ids: readonly number[], completions: readonly Completion[]): Uint8Array {
  return encodeCompletions(completions, ids) ?? encode(ids.map((id, i) => completionToWire(completions[i] ?? NO_COMPLETION, id)));
}

const NO_COMPLETION: Completion = { status: 'bad-request', detail: 'no completion' };

/** Encodes the answers in request order: decode failures in their place, the executor's completions between. */
function reply(batch: WireWorkRequestBatch, answers: readonly (WireCompletion | undefined)[], completions: readonly Completion[]): Uint8Array {
  let next = 0;
  const out = answers.map((slot, i) => {
    if (slot !== undefined) return slot;
    const completion = completions[next++];
    const id = batch.requests[i]?.id ?? 0;
    return completionToWire(completion ?? NO_COMPLETION, id);
  });
  return encode(out);
}

function encode(completions: WireCompletion[]): Uint8Array {
  return encodeCompletionBatch(completionBatchToWire(completions));
}
