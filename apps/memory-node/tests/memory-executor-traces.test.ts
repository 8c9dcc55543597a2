import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { MemoryNodeExecutor } from '../src/memory-executor.js';

const clock = { nowNs: () => 0, sleep: async () => undefined } as never;
const SAMPLED: SpanContextRef = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
const SAMPLED_2: SpanContextRef = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
const UNSAMPLED: SpanContextRef = { traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', spanId: 'bbbbbbbbbbbbbbbb', traceFlags: 0 };

/** A Trace that records the spans started on it. */
function recordingTrace() {
  const started: { name: string; parent: SpanContextRef | undefined; attributes: Record<string, SpanAttributeValue>; ended: boolean }[] = [];
  const trace: Trace = {
    startSpan(name: string, options?: StartSpanOptions): Span {
      const record = { name, parent: options?.parent, attributes: { ...options?.attributes }, ended: false };
      started.push(record);
      return { context: undefined, setAttribute: (key, value) => void (record.attributes[key] = value), addLink() {}, recordError() {}, end: () => void (record.ended = true) };
    },
  };
  return { trace, started };
}

function setup() {
  const { trace, started } = recordingTrace();
  const ex = new MemoryNodeExecutor({ node: 0, lockCount: 8, entryBytes: 8, lockTableBytes: 64 }, clock, trace);
  const rkey = ex.memory.regions().find((r) => r.region === 0)!.rkey;
  const faa = (slot: number): WorkRequest => ({ op: 'faa', addr: { node: 0, region: 0, rkey, offset: slot * 8 }, add: 1n });
  return { ex, started, faa };
}

describe('memory node verb spans', () => {
  it('starts none under an unsampled parent', async () => {
    const { ex, started, faa } = setup();
    await ex.executeBatch([faa(0), faa(1), faa(2)], 2, { trace: UNSAMPLED, requestTraces: [] });
    await ex.executeBatch([faa(0), faa(1)], 2, { requestTraces: [UNSAMPLED, UNSAMPLED] });
    expect(started).toEqual([]);
  });

  it('starts one per verb under a sampled parent, ended with the verb status', async () => {
    const { ex, started, faa } = setup();
    await ex.executeBatch([faa(0), faa(1), faa(2)], 2, { trace: SAMPLED, requestTraces: [] });
    expect(started.map((s) => [s.name, s.parent, s.attributes['lockfabric.verb.status'], s.ended])).toEqual([
      ['verb.faa', SAMPLED, 'ok', true],
      ['verb.faa', SAMPLED, 'ok', true],
      ['verb.faa', SAMPLED, 'ok', true],
    ]);
  });

  it('judges each verb by its own parent first, then the doorbell’s', async () => {
    const { ex, started, faa } = setup();
    await ex.executeBatch([faa(0), faa(1), faa(2), faa(3)], 2, { trace: SAMPLED, requestTraces: [UNSAMPLED, undefined, SAMPLED_2] });
    expect(started.map((s) => s.parent)).toEqual([SAMPLED, SAMPLED_2, SAMPLED]);
    started.length = 0;
    await ex.executeBatch([faa(0), faa(1)], 2, { trace: UNSAMPLED, requestTraces: [undefined, SAMPLED_2] });
    expect(started.map((s) => s.parent)).toEqual([SAMPLED_2]);
  });
});
