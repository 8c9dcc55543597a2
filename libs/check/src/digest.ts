import { HistoryColumns } from './columns.js';
import type { HistoryInput } from './columns.js';
import { eventFromFlags } from './history.js';
import type { HistoryEvent } from './history.js';

/**
 * 64-bit FNV-1a, kept as four 16-bit limbs so every intermediate product stays an exact double
 * (bigint arithmetic is several times slower and digests run over millions of events).
 */
export class Fnv1a64 {
  // Offset basis 0xcbf29ce484222325, least significant limb first.
  private h0 = 0x2325;
  private h1 = 0x8422;
  private h2 = 0x9ce4;
  private h3 = 0xcbf2;

  /** Feeds one byte (0..255). */
  byte(value: number): void {
    this.h0 ^= value & 0xff;
    // Multiply by the FNV prime 2^40 + 0x1b3: the 2^40 term shifts limbs 0 and 1 into limbs 2 and 3.
    const t0 = this.h0 * 0x1b3;
    const t1 = this.h1 * 0x1b3 + (t0 >>> 16);
    const t2 = this.h2 * 0x1b3 + (t1 >>> 16) + (this.h0 << 8);
    const t3 = this.h3 * 0x1b3 + (t2 >>> 16) + (this.h1 << 8);
    this.h0 = t0 & 0xffff;
    this.h1 = t1 & 0xffff;
    this.h2 = t2 & 0xffff;
    this.h3 = t3 & 0xffff;
  }

  bytes(data: Uint8Array): void {
    for (let i = 0; i < data.length; i++) this.byte(data[i] as number);
  }

  /** Feeds the UTF-8 encoding of `text`. */
  text(text: string): void {
    // ASCII runs (all of a history's text but free-text errors) hash with the limbs in locals:
    // the digest of a long run is otherwise a noticeable share of its wall time.
    let h0 = this.h0;
    let h1 = this.h1;
    let h2 = this.h2;
    let h3 = this.h3;
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i);
      if (code < 0x80) {
        h0 ^= code;
        const t0 = h0 * 0x1b3;
        const t1 = h1 * 0x1b3 + (t0 >>> 16);
        const t2 = h2 * 0x1b3 + (t1 >>> 16) + (h0 << 8);
        const t3 = h3 * 0x1b3 + (t2 >>> 16) + (h1 << 8);
        h0 = t0 & 0xffff;
        h1 = t1 & 0xffff;
        h2 = t2 & 0xffff;
        h3 = t3 & 0xffff;
        continue;
      }
      this.h0 = h0;
      this.h1 = h1;
      this.h2 = h2;
      this.h3 = h3;
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          i++;
        }
      }
      if (code < 0x800) {
        this.byte(0xc0 | (code >> 6));
      } else if (code < 0x10000) {
        this.byte(0xe0 | (code >> 12));
        this.byte(0x80 | ((code >> 6) & 0x3f));
      } else {
        this.byte(0xf0 | (code >> 18));
        this.byte(0x80 | ((code >> 12) & 0x3f));
        this.byte(0x80 | ((code >> 6) & 0x3f));
      }
      this.byte(0x80 | (code & 0x3f));
      h0 = this.h0;
      h1 = this.h1;
      h2 = this.h2;
      h3 = this.h3;
    }
    this.h0 = h0;
    this.h1 = h1;
    this.h2 = h2;
    this.h3 = h3;
  }

  /** The digest as 16 lowercase hex characters. */
  hex(): string {
    return [this.h3, this.h2, this.h1, this.h0].map((limb) => limb.toString(16).padStart(4, '0')).join('');
  }
}

/** FNV-1a 64 of raw bytes, as 16 hex characters. */
export function fnv1a64Hex(data: Uint8Array | string): string {
  const hash = new Fnv1a64();
  if (typeof data === 'string') hash.text(data);
  else hash.bytes(data);
  return hash.hex();
}

/**
 * Canonical order: by time, then by client name; events of one client at one time keep their
 * recorded order (it is meaningful: a release may complete and the next acquire start at the same
 * virtual instant). So two processes' histories give the same digest whichever order they are merged in.
 */
export function canonicalOrder(history: HistoryInput): HistoryEvent[] {
  const columns = HistoryColumns.from(history);
  return Array.from(canonicalIndices(columns), (i) => columns.event(i));
}

function canonicalIndices(columns: HistoryColumns): Uint32Array {
  const names = columns.clientNames;
  const byName = names.map((_, id) => id).sort((a, b) => ((names[a] as string) < (names[b] as string) ? -1 : (names[a] as string) > (names[b] as string) ? 1 : 0));
  const rank = new Uint32Array(names.length);
  byName.forEach((id, r) => (rank[id] = r));
  const order = new Uint32Array(columns.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  const { times, clients } = columns;
  // Columns are already in time order, stable: only runs of same-time events need regrouping by
  // client, each run on its own, instead of a comparator sort over the whole history.
  const byClient = (a: number, b: number) => (rank[clients[a] as number] as number) - (rank[clients[b] as number] as number) || a - b;
  for (let start = 0; start < order.length; ) {
    let end = start + 1;
    while (end < order.length && times[end] === times[start]) end++;
    if (end - start > 1) order.subarray(start, end).sort(byClient);
    start = end;
  }
  return order;
}

/**
 * Digest of a history in canonical order. Each event is hashed as the text of its fields
 * separated by tabs and ended by a newline — client, lock, mode, op, phase, timeNs, error — with
 * the two free-text fields prefixed by their length ("4:3/17") so no content can imitate a
 * separator, and "-" for a missing error.
 */
export function historyDigest(history: HistoryInput): string {
  const columns = HistoryColumns.from(history);
  const hash = new Fnv1a64();
  const clientText = columns.clientNames.map((name) => `${name.length}:${name}\t`);
  const flagText = Array.from({ length: 12 }, (_, flag) => {
    const { mode, op, phase } = eventFromFlags('', 0, flag, 0, undefined);
    return `\t${mode}\t${op}\t${phase}\t`;
  });
  for (const i of canonicalIndices(columns)) {
    hash.text(clientText[columns.clients[i] as number] as string);
    hash.text(String(columns.locks[i]));
    hash.text(flagText[columns.flags[i] as number] as string);
    hash.text(String(columns.times[i]));
    hash.byte(0x09);
    const error = columns.errors.get(i);
    hash.text(error === undefined ? '-' : `${error.length}:${error}`);
    hash.byte(0x0a);
  }
  return hash.hex();
}
