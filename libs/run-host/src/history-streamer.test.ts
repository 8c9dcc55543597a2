import { HistoryRecorder } from '@lockfabric/check';
import { historyEventFromWire } from '@lockfabric/workloads';
import { fromBinary } from '@bufbuild/protobuf';
import { RunEventSchema, type HistoryChunk } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { HISTORY_CHUNK_EVENTS, HistoryStreamer } from './history-streamer.js';

function record(recorder: HistoryRecorder, from: number, count: number): void {
  for (let i = from; i < from + count; i++) recorder.invoke(`1/${i % 3}`, 'acquire', i, 'exclusive', i * 10);
}

function chunkOf(bytes: Uint8Array): HistoryChunk {
  const event = fromBinary(RunEventSchema, bytes).event;
  if (event.case !== 'history') throw new Error(`expected a history RunEvent, got ${String(event.case)}`);
  return event.value;
}

describe('HistoryStreamer', () => {
  it('sends each recorded event exactly once, in order, across flushes and chunks', () => {
    const recorder = new HistoryRecorder();
    const chunks: HistoryChunk[] = [];
    const streamer = new HistoryStreamer(recorder, (bytes) => chunks.push(chunkOf(bytes)), () => 0);
    record(recorder, 0, 5);
    streamer.flush();
    streamer.flush();
    record(recorder, 5, HISTORY_CHUNK_EVENTS + 2);
    streamer.flush();
    const received = chunks.flatMap((c) => c.events.map(historyEventFromWire));
    expect(received).toStrictEqual(recorder.events());
    expect(chunks.map((c) => c.events.length)).toStrictEqual([5, HISTORY_CHUNK_EVENTS, 2]);
    expect(streamer.sentEvents).toBe(recorder.size);
  });

  it('holds back while the stream buffers past its high-water mark, and sends all at the end', () => {
    const recorder = new HistoryRecorder();
    let buffered = 0;
    const chunks: HistoryChunk[] = [];
    const streamer = new HistoryStreamer(recorder, (bytes) => ((buffered += bytes.length), chunks.push(chunkOf(bytes))), () => buffered, 1_000);
    record(recorder, 0, HISTORY_CHUNK_EVENTS * 3);
    streamer.flush();
    expect(chunks).toHaveLength(1); // the first chunk crossed the mark
    streamer.flush();
    expect(chunks).toHaveLength(1);
    buffered = 0; // the driver read it
    streamer.flush();
    expect(chunks).toHaveLength(2);
    streamer.flush(Infinity);
    expect(streamer.sentEvents).toBe(recorder.size);
  });
});
