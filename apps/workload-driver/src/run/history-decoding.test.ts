import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { HistoryEvent } from '@lockfabric/check';
import { HistoryChunkSchema, RunEventSchema, RunProgressSchema, RunResultSchema } from '@lockfabric/wire';
import { historyEventFromWire, historyEventToWire } from '@lockfabric/workloads';
import { SeededRandom } from '@lockfabric/random';
import { describe, expect, it } from 'vitest';
import { RunEventReader } from './history-decoding.js';

const chunk = (events: readonly HistoryEvent[]): Uint8Array =>
  toBinary(RunEventSchema, create(RunEventSchema, { event: { case: 'history', value: create(HistoryChunkSchema, { events: events.map(historyEventToWire) }) } }));

/** What the driver decoded before: protobuf-es, then historyEventFromWire. */
const reflective = (bytes: Uint8Array): HistoryEvent[] => {
  const event = fromBinary(RunEventSchema, bytes);
  return event.event.case === 'history' ? event.event.value.events.map(historyEventFromWire) : [];
};

function randomEvents(seed: number, n: number): HistoryEvent[] {
  const random = new SeededRandom(seed);
  const names = ['1/0', '1/17', '2/3', 'clié/ñ', 'x'.repeat(80), ''];
  const times = [0, 1, 127, 128, 2 ** 53 - 1, 1.7e18, 5.8e16 + 4096, -5, -(2 ** 40)];
  return Array.from({ length: n }, () => {
    const base: HistoryEvent = {
      client: names[random.int(names.length)]!,
      lock: [0, 1, 999, 0xffff_ffff][random.int(4)]!,
      mode: random.next() < 0.5 ? 'shared' : 'exclusive',
      op: random.next() < 0.5 ? 'acquire' : 'release',
      phase: (['invoke', 'ok', 'fail'] as const)[random.int(3)]!,
      timeNs: times[random.int(times.length)]! + (random.next() < 0.5 ? 0 : random.int(1_000_000)),
    };
    return base.phase === 'fail' && random.next() < 0.7 ? { ...base, error: random.next() < 0.5 ? 'LOCK_TIMEOUT' : 'délai ⏱' } : base;
  });
}

describe('RunEventReader', () => {
  it('decodes history chunks exactly as protobuf-es and historyEventFromWire did, without protobuf-es', () => {
    const reader = new RunEventReader('test');
    for (let seed = 1; seed <= 20; seed++) {
      const bytes = chunk(randomEvents(seed, 200));
      const decoded = reader.read(bytes);
      expect(decoded).toStrictEqual({ kind: 'history', events: reflective(bytes) });
    }
    expect(reader.counts).toStrictEqual({ directChunks: 20, reflective: 0 });
  });

  it('hands progress and the result to protobuf-es: one reflective decode each, not one per history chunk', () => {
    const reader = new RunEventReader('test');
    const progress = toBinary(RunEventSchema, create(RunEventSchema, { event: { case: 'progress', value: create(RunProgressSchema, { opsDone: 42n }) } }));
    const result = toBinary(RunEventSchema, create(RunEventSchema, { event: { case: 'result', value: create(RunResultSchema, { acquires: 7n }) } }));
    const p = reader.read(progress);
    for (let i = 0; i < 50; i++) reader.read(chunk(randomEvents(i, 10)));
    const r = reader.read(result);
    expect(p.kind === 'other' && p.event.event.case === 'progress' && p.event.event.value.opsDone).toBe(42n);
    expect(r.kind === 'other' && r.event.event.case === 'result' && r.event.event.value.acquires).toBe(7n);
    expect(reader.counts).toStrictEqual({ directChunks: 50, reflective: 2 });
  });

  it('merges two history fields in one message as protobuf does (through protobuf-es)', () => {
    const a = chunk(randomEvents(1, 3));
    const b = chunk(randomEvents(2, 4));
    const both = new Uint8Array([...a, ...b]);
    const reader = new RunEventReader('test');
    expect(reader.read(both)).toStrictEqual({ kind: 'history', events: reflective(both) });
    expect(reflective(both)).toHaveLength(7);
    expect(reader.counts.reflective).toBe(1);
  });

  it('refuses truncated chunks and wrong wire types with MALFORMED_INPUT', () => {
    const reader = new RunEventReader('grpc Run from compute-1');
    const bytes = chunk(randomEvents(3, 5));
    expect(() => reader.read(bytes.subarray(0, bytes.length - 3))).toThrow(expect.objectContaining({ code: 'MALFORMED_INPUT' }));
    // one event whose lock (field 2) comes as a length-delimited field
    expect(() => reader.read(new Uint8Array([0x12, 0x04, 0x0a, 0x02, 0x12, 0x00]))).toThrow(expect.objectContaining({ code: 'MALFORMED_INPUT' }));
  });
});
