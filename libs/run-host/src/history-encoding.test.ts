import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { HistoryRecorder } from '@lockfabric/check';
import { HistoryChunkSchema, RunEventSchema } from '@lockfabric/wire';
import { historyEventFromWire, historyEventToWire } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { ClientNameCache, encodeHistoryRunEvent } from './history-encoding.js';

/** What the reflective protobuf-es encoder writes for the same events: the reference. */
function reference(recorder: HistoryRecorder, from: number, to: number): Uint8Array {
  const events = recorder.events().slice(from, to).map(historyEventToWire);
  return toBinary(RunEventSchema, create(RunEventSchema, { event: { case: 'history', value: create(HistoryChunkSchema, { events }) } }));
}

function varied(): HistoryRecorder {
  const r = new HistoryRecorder();
  r.invoke('1/0', 'acquire', 0, 'exclusive', 0); // lock 0 and time 0 are proto3 defaults: omitted
  r.ok('1/0', 'acquire', 0, 'exclusive', 127);
  r.invoke('2/13', 'acquire', 0xffff_ffff, 'shared', 128);
  r.fail('2/13', 'acquire', 0xffff_ffff, 'shared', 2 ** 40 + 0.6, 'LockTimeoutError');
  r.invoke('ünïcode/7', 'release', 300, 'exclusive', Number.MAX_SAFE_INTEGER);
  r.ok('ünïcode/7', 'release', 300, 'exclusive', 1_700_000_000_123_456);
  r.invoke('ünïcode/7', 'acquire', 301, 'exclusive', Number(1_764_391_234_567_891_234n)); // a wall-clock time in ns: past 2^53
  r.ok('ünïcode/7', 'acquire', 301, 'exclusive', 2 ** 62 + 2 ** 20);
  r.fail('', 'release', 16_384, 'shared', 5, '');
  return r;
}

describe('encodeHistoryRunEvent', () => {
  it('writes the bytes the generated schema writes, for every field shape', () => {
    const r = varied();
    const names = new ClientNameCache();
    expect(encodeHistoryRunEvent(r.columns(), 0, r.size, names)).toStrictEqual(reference(r, 0, r.size));
    expect(encodeHistoryRunEvent(r.columns(), 2, 5, names)).toStrictEqual(reference(r, 2, 5));
    expect(names.fallbacks).toBe(0); // wall-clock times (past 2^53) take the fast path
  });

  it('decodes back to the recorded events', () => {
    const r = varied();
    const decoded = fromBinary(RunEventSchema, encodeHistoryRunEvent(r.columns(), 0, r.size, new ClientNameCache()));
    expect(decoded.event.case).toBe('history');
    const events = decoded.event.case === 'history' ? decoded.event.value.events.map(historyEventFromWire) : [];
    // The wire carries whole nanoseconds, and an empty error is no error.
    const expected = r.events().map(({ error, ...rest }) => ({ ...rest, timeNs: Math.round(rest.timeNs), ...(error ? { error } : {}) }));
    expect(events).toStrictEqual(expected);
  });

  it('times outside the varint fast path (negative, past int64) still encode as the schema does', () => {
    const names = new ClientNameCache();
    for (const odd of [-3, -(2 ** 60)]) {
      const r = new HistoryRecorder();
      r.invoke('1/0', 'acquire', 4, 'exclusive', 10);
      r.ok('1/0', 'acquire', 4, 'exclusive', odd);
      expect(encodeHistoryRunEvent(r.columns(), 0, r.size, names)).toStrictEqual(reference(r, 0, r.size));
    }
    expect(names.fallbacks).toBe(2);
  });
});
