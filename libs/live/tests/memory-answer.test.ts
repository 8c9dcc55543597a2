import type { Completion, NodeId, WorkRequest } from '@lockfabric/ports';
import { encodeWorkRequestBatch, workRequestBatchToWire, workRequestToWire } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { DoorbellAnswerer, type AnswerCounters } from '../src/memory-answer.js';
import type { ExecuteContext, MemoryExecutor } from '../src/memory-server.js';
import { FakeExecutor, memoryLogger } from './support.js';

const addr = (offset: number) => ({ node: 9, region: 0, rkey: 77, offset });
const span = { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1 };

/** A doorbell of `verbs` requests like caslock's: CAS to take a lock word, WRITE to free it. */
function doorbell(verbs: number, options: { trace?: boolean; requestTrace?: boolean; firstId?: number } = {}): Uint8Array {
  const requests = Array.from({ length: verbs }, (_, i) => {
    const wr: WorkRequest = i % 2 === 0 ? { op: 'cas', addr: addr(8 * i), compare: 0n, swap: BigInt(i + 1), lock: i } : { op: 'write', addr: addr(8 * (i - 1)), data: new Uint8Array(8), lock: i - 1 };
    return workRequestToWire(wr, (options.firstId ?? 1) + i, options.requestTrace && i === 1 ? span : undefined);
  });
  return encodeWorkRequestBatch(workRequestBatchToWire(3, requests, options.trace ? span : undefined));
}

function setup(executor: MemoryExecutor, mutantGeneralPath = false) {
  const counters: AnswerCounters = { batches: 0, requests: 0, malformedFrames: 0, malformedRequests: 0, executorErrors: 0 };
  const logger = memoryLogger();
  const malformed = new MalformedInputCounter({ logger });
  const answerer = new DoorbellAnswerer({ executor, counters, malformed, logger, source: 'test', mutantGeneralPath });
  return { answerer, counters, logger, malformed };
}

/** Answers `frames` on a fresh executor, the direct way and the general way: bytes, counters and log must agree. */
async function both(frames: readonly Uint8Array[], executor: () => MemoryExecutor) {
  const out = [false, true].map(async (general) => {
    const s = setup(executor(), general);
    const answers: Uint8Array[] = [];
    for (const frame of frames) answers.push(await s.answerer.answer(frame, 'peer'));
    return { answers, counters: s.counters, log: s.logger.lines, malformed: s.malformed.bySource(), generalFrames: s.answerer.generalFrames };
  });
  const [direct, general] = await Promise.all(out);
  return { direct: direct!, general: general! };
}

class ThrowingExecutor extends FakeExecutor {
  constructor(private readonly how: 'throw' | 'reject' | 'short' | 'late') {
    super();
  }

  override executeBatch(batch: readonly WorkRequest[], initiator: NodeId, context?: ExecuteContext): Completion[] | Promise<Completion[]> {
    switch (this.how) {
      case 'throw':
        throw new Error('table on fire');
      case 'reject':
        return Promise.reject(new Error('table on fire'));
      case 'short':
        return [];
      default:
        return Promise.resolve(super.executeBatch(batch, initiator, context));
    }
  }
}

describe('DoorbellAnswerer: frames read straight into port requests, answered as before', () => {
  it('gives the general path\'s bytes, counters and log for doorbells, traced ones, malformed frames and requests', async () => {
    const badOpcode = Uint8Array.from(doorbell(1));
    badOpcode[badOpcode.indexOf(0x10) + 1] = 9;
    const frames = [doorbell(32), doorbell(32, { firstId: 33 }), doorbell(4, { trace: true }), doorbell(4, { requestTrace: true }), new Uint8Array(0), Uint8Array.from([0x12, 0x40, 0x08]), badOpcode, doorbell(1, { firstId: 0 })];
    const { direct, general } = await both(frames, () => new FakeExecutor());
    expect(direct.answers).toEqual(general.answers);
    expect(direct.counters).toEqual(general.counters);
    expect(direct.counters).toMatchObject({ batches: 7, requests: 74, malformedFrames: 1, malformedRequests: 1 });
    expect(direct.log).toEqual(general.log);
    expect(direct.malformed).toEqual(general.malformed);
  });

  it('answers executor failures (throw, reject, too few completions, late) as before', async () => {
    for (const how of ['throw', 'reject', 'short', 'late'] as const) {
      const { direct, general } = await both([doorbell(6), doorbell(2, { firstId: 7 })], () => new ThrowingExecutor(how));
      expect(direct.answers, how).toEqual(general.answers);
      expect(direct.counters, how).toEqual(general.counters);
      expect(direct.log, how).toEqual(general.log);
    }
  });

  it('reads a doorbell without the generated message shapes and builds no per-request trace list nobody needs (mutant: the general path does both)', async () => {
    const run = (general: boolean) => {
      const executor = new FakeExecutor();
      const s = setup(executor, general);
      for (let i = 0; i < 10; i++) s.answerer.answer(doorbell(32, { firstId: 1 + 32 * i }), 'peer');
      return { generalFrames: s.answerer.generalFrames, contexts: executor.batches.map((b) => b.context) };
    };
    const direct = run(false);
    expect(direct.generalFrames).toBe(0);
    expect(direct.contexts).toEqual(Array.from({ length: 10 }, () => undefined));
    const mutant = run(true);
    expect(mutant.generalFrames).toBe(10);
    expect(mutant.contexts[0]).toEqual({ requestTraces: Array.from({ length: 32 }, () => undefined) });
    // Traced doorbells get their contexts, the per-request list only when a request has its own.
    const traced = new FakeExecutor();
    const s = setup(traced);
    s.answerer.answer(doorbell(2, { requestTrace: true }), 'peer');
    s.answerer.answer(doorbell(2, { trace: true, firstId: 3 }), 'peer');
    expect(s.answerer.generalFrames).toBe(0);
    expect(traced.batches.map((b) => b.context)).toEqual([{ requestTraces: [undefined, span] }, { trace: span }]);
  });
});
