import { fromBinary } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { HistoryEvent } from '@lockfabric/check';
import { MalformedInputError } from '@lockfabric/ports';
import { RunEventSchema } from '@lockfabric/wire';
import type { HistoryEvent as WireHistoryEvent, RunEvent } from '@lockfabric/wire';
import { historyEventFromWire } from '@lockfabric/workloads';

/** What one Run stream message held: a history chunk's events (decoded here) or another event. */
export type DecodedRunEvent = { readonly kind: 'history'; readonly events: HistoryEvent[] } | { readonly kind: 'other'; readonly event: RunEvent };

const RUN_EVENT_HISTORY = 2;
const CHUNK_EVENTS = 1;

/**
 * Decodes the messages of one node's Run stream. History chunks — nearly every byte of a run — are
 * read field by field straight into the checker's events: the reflective protobuf-es decoder built
 * a message object per event and then a second object from it, the driver's largest cost per
 * message while a live run streams (libs/run-host history-encoding.ts writes them the same way).
 * Progress and the result are rare and go through protobuf-es. The events equal
 * `historyEventFromWire` of protobuf-es's decode (history-decoding.test.ts); input it would refuse
 * throws MalformedInputError here.
 */
export class RunEventReader {
  /** Chunks read by the direct decoder, and messages given to protobuf-es. */
  readonly counts = { directChunks: 0, reflective: 0 };
  /** Client keys seen, by their ASCII bytes: a node has a few dozen, each in thousands of events. */
  private readonly names = new Map<string, string>();

  constructor(private readonly source: string) {}

  read(bytes: Uint8Array): DecodedRunEvent {
    // RunEvent is one oneof: a history chunk is the tag byte of field 2, its length, and nothing after it.
    if (bytes.length > 0 && bytes[0] === ((RUN_EVENT_HISTORY << 3) | WireType.LengthDelimited)) {
      let events: HistoryEvent[] | undefined;
      try {
        events = this.history(new BinaryReader(bytes), bytes);
      } catch (error) {
        throw error instanceof MalformedInputError ? error : new MalformedInputError(this.source, `not a lockfabric.v1.RunEvent: ${(error as Error).message}`);
      }
      if (events !== undefined) {
        this.counts.directChunks++;
        return { kind: 'history', events };
      }
    }
    this.counts.reflective++;
    const event = fromBinary(RunEventSchema, bytes);
    if (event.event.case === 'history') return { kind: 'history', events: event.event.value.events.map(historyEventFromWire) };
    return { kind: 'other', event };
  }

  /** The events of a message that is exactly one history chunk; undefined for anything else (merged or mixed oneof fields). */
  private history(r: BinaryReader, bytes: Uint8Array): HistoryEvent[] | undefined {
    r.tag();
    const end = this.end(r);
    if (end !== r.len) return undefined;
    const events: HistoryEvent[] = [];
    while (r.pos < end) {
      const [no, wt] = r.tag();
      if (no === CHUNK_EVENTS && wt === WireType.LengthDelimited) events.push(this.event(r, bytes, this.end(r)));
      else r.skip(wt, no);
    }
    if (r.pos !== end) throw new MalformedInputError(this.source, 'history chunk runs past its length');
    return events;
  }

  private event(r: BinaryReader, bytes: Uint8Array, end: number): HistoryEvent {
    let client = '';
    let lock = 0;
    let mode = 0;
    let op = 0;
    let phase = 0;
    let timeNs = 0n;
    let error = '';
    while (r.pos < end) {
      const [no, wt] = r.tag();
      if (no >= 1 && no <= 7 && wt !== (no === 1 || no === 7 ? WireType.LengthDelimited : WireType.Varint)) {
        throw new MalformedInputError(this.source, `history event field ${no} has wire type ${wt}`);
      }
      switch (no) {
        case 1:
          client = this.name(r, bytes);
          break;
        case 2:
          lock = r.uint32();
          break;
        case 3:
          mode = r.int32();
          break;
        case 4:
          op = r.int32();
          break;
        case 5:
          phase = r.int32();
          break;
        case 6:
          timeNs = BigInt(r.int64()); // a bigint already where BigInt exists (Node.js)
          break;
        case 7:
          error = r.string();
          break;
        default:
          r.skip(wt, no);
      }
    }
    if (r.pos !== end) throw new MalformedInputError(this.source, 'history event runs past its length');
    // a plain object of the generated message's shape: historyEventFromWire reads only its fields
    const wire: WireHistoryEvent = { $typeName: 'lockfabric.v1.HistoryEvent', client, lock, mode, op, phase, timeNs, error };
    return historyEventFromWire(wire);
  }

  private end(r: BinaryReader): number {
    const length = r.uint32();
    const end = r.pos + length;
    if (end > r.len) throw new MalformedInputError(this.source, 'length beyond the message');
    return end;
  }

  /** A client key: short and ASCII, so looked up by its bytes rather than decoded each time. */
  private name(r: BinaryReader, bytes: Uint8Array): string {
    const at = r.pos;
    const end = this.end(r);
    const start = r.pos;
    let key = '';
    for (let i = start; i < end && end - start <= 64; i++) {
      const byte = bytes[i]!;
      if (byte >= 0x80) break;
      key += String.fromCharCode(byte);
    }
    if (key.length !== end - start) {
      r.pos = at; // long or not ASCII: decoded as protobuf-es decodes it
      return r.string();
    }
    r.pos = end;
    let name = this.names.get(key);
    if (name === undefined) {
      name = key;
      this.names.set(key, name);
    }
    return name;
  }
}
