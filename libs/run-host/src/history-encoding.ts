import { toBinary, create } from '@bufbuild/protobuf';
import { FLAG_EXCLUSIVE, FLAG_RELEASE, type RecordedColumns } from '@lockfabric/check';
import { HistoryChunkSchema, RunEventSchema, varintSize, writeVarint } from '@lockfabric/wire';
import { historyEventToWire } from '@lockfabric/workloads';
import { eventFromFlags } from '@lockfabric/check';

/**
 * The encoded `RunEvent { history: HistoryChunk }` for events [from, to) of a recorder's columns,
 * written straight from the columns. The reflective protobuf-es encoder built one message object
 * per event and walked it field by field: about a tenth of a busy compute node's CPU in a live run
 * (64 clients, caslock). Output is byte-identical to `toBinary(RunEventSchema, …)` (fields in
 * number order, proto3 defaults omitted; driver.proto `HistoryEvent`), so the wire is unchanged;
 * history-encoding.test.ts holds that against the schema.
 */
export function encodeHistoryRunEvent(columns: RecordedColumns, from: number, to: number, clientBytes: ClientNameCache): Uint8Array {
  const { clients, locks, flags, times, errors, clientNames } = columns;
  // Pass 1: sizes (the length prefixes come before the bytes they count).
  const sizes = new Uint32Array(to - from);
  let chunkSize = 0;
  for (let i = from; i < to; i++) {
    const time = Math.round(times[i] ?? 0);
    // Wall-clock times are about 1.7e18 ns, past 2^53: still whole doubles, which the varint writer
    // splits exactly (mod and division by 128 are exact on them). Negative times, and those past
    // int64, go the generic way.
    if (!(time >= 0 && time < INT64_LIMIT)) {
      clientBytes.fallbacks++;
      return reflective(columns, from, to);
    }
    const name = clientBytes.of(clients[i] ?? 0, clientNames);
    const error = errors.get(i);
    const lock = locks[i] ?? 0;
    let size = name.length > 0 ? 1 + varintSize(name.length) + name.length : 0;
    if (lock !== 0) size += 1 + varintSize(lock);
    size += 6; // mode, op and phase: one tag byte and one value byte each, never 0
    if (time !== 0) size += 1 + varintSize(time);
    if (error !== undefined && error !== '') {
      const bytes = clientBytes.text(error);
      size += 1 + varintSize(bytes.length) + bytes.length;
    }
    sizes[i - from] = size;
    chunkSize += 1 + varintSize(size) + size;
  }
  const out = new Uint8Array(1 + varintSize(chunkSize) + chunkSize);
  let at = 0;
  out[at++] = (2 << 3) | 2; // RunEvent.history
  at = writeVarint(out, at, chunkSize);
  for (let i = from; i < to; i++) {
    out[at++] = (1 << 3) | 2; // HistoryChunk.events
    at = writeVarint(out, at, sizes[i - from] ?? 0);
    const name = clientBytes.of(clients[i] ?? 0, clientNames);
    if (name.length > 0) {
      out[at++] = (1 << 3) | 2;
      at = writeVarint(out, at, name.length);
      out.set(name, at);
      at += name.length;
    }
    const lock = locks[i] ?? 0;
    if (lock !== 0) {
      out[at++] = 2 << 3;
      at = writeVarint(out, at, lock);
    }
    const flag = flags[i] ?? 0;
    out[at++] = 3 << 3;
    out[at++] = flag & FLAG_EXCLUSIVE ? 2 : 1; // LOCK_MODE_EXCLUSIVE : LOCK_MODE_SHARED
    out[at++] = 4 << 3;
    out[at++] = flag & FLAG_RELEASE ? 2 : 1; // HISTORY_OP_RELEASE : HISTORY_OP_ACQUIRE
    out[at++] = 5 << 3;
    out[at++] = (flag >> 2) + 1; // recorder phase 0..2 → HISTORY_PHASE_INVOKE..FAIL
    const time = Math.round(times[i] ?? 0);
    if (time !== 0) {
      out[at++] = 6 << 3;
      at = writeVarint(out, at, time);
    }
    const error = errors.get(i);
    if (error !== undefined && error !== '') {
      const bytes = clientBytes.text(error);
      out[at++] = (7 << 3) | 2;
      at = writeVarint(out, at, bytes.length);
      out.set(bytes, at);
      at += bytes.length;
    }
  }
  return out;
}

/** UTF-8 bytes of the client names (a few dozen per run, each written thousands of times). */
export class ClientNameCache {
  /** Chunks that took the reflective encoder (a time outside the fast path). */
  fallbacks = 0;
  private readonly names: Uint8Array[] = [];
  private readonly encoder = new TextEncoder();

  of(index: number, names: readonly string[]): Uint8Array {
    return (this.names[index] ??= this.encoder.encode(names[index] ?? ''));
  }

  text(value: string): Uint8Array {
    return this.encoder.encode(value);
  }
}

function reflective(columns: RecordedColumns, from: number, to: number): Uint8Array {
  const events = [];
  for (let i = from; i < to; i++) {
    events.push(historyEventToWire(eventFromFlags(columns.clientNames[columns.clients[i] ?? 0] ?? '', columns.locks[i] ?? 0, columns.flags[i] ?? 0, columns.times[i] ?? 0, columns.errors.get(i))));
  }
  return toBinary(RunEventSchema, create(RunEventSchema, { event: { case: 'history', value: create(HistoryChunkSchema, { events }) } }));
}

const INT64_LIMIT = 2 ** 63;

