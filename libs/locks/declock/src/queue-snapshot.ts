import { classifyEntry, decodeEntry } from './entry.js';
import type { EntryState, QueueEntry } from './entry.js';
import type { HeaderLayout } from './header.js';
import { earliest } from './timestamp.js';

/** A READ of the C queue entries (taken alone or right after the header), indexed by logical position. */
export class QueueSnapshot {
  private view: DataView;
  private offset: number;

  constructor(
    private readonly header: HeaderLayout,
    bytes: Uint8Array,
    /** Byte offset of entry 0 inside `bytes` (8 when the header was read too). */
    offset = 0,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.offset = offset;
  }

  entry(pos: number): QueueEntry {
    return decodeEntry(this.view.getBigUint64(this.offset + this.header.slot(pos) * 8, true));
  }

  state(pos: number): EntryState {
    return classifyEntry(this.entry(pos), this.header.version(pos));
  }

  /** Takes every slot from a newer READ. */
  refresh(newer: QueueSnapshot): void {
    this.view = newer.view;
    this.offset = newer.offset;
  }

  /** Earliest timestamp among valid entries at positions `from … to-1`, skipping clients of `excludeNode`. */
  earliestTs(from: number, to: number, excludeNode?: number): number | undefined {
    const stamps: number[] = [];
    for (let pos = from; pos < to; pos++) {
      if (this.header.lap(pos) >= 0xffff || this.state(pos) !== 'valid') continue;
      const entry = this.entry(pos);
      if (excludeNode !== undefined && entry.client.node === excludeNode) continue;
      stamps.push(entry.ts);
    }
    return earliest(stamps);
  }
}
