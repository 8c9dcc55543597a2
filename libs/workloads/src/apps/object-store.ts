import type { ObjectStoreSpec } from './types.js';

/**
 * Object content, written whole by every set: [tag u64][checksum u64][payload]. The tag names the
 * writer and its sequence number ((writer + 1) << 32 | seq); the payload is derived from the tag
 * and the checksum covers tag and payload, so a READ that mixes two writes (a torn object) or
 * bytes nobody wrote is recognised. Tag 0 with an all-zero body is the never-written object, so a
 * fresh (zero-filled) region is a valid store.
 */
export const OBJECT_HEADER_BYTES = 16;

export function objectTag(writer: number, seq: number): bigint {
  return (BigInt(writer + 1) << 32n) | BigInt(seq >>> 0);
}

function payloadByte(tag: bigint, index: number): number {
  if (tag === 0n) return 0;
  const lo = Number(tag & 0xffff_ffffn);
  const hi = Number(tag >> 32n);
  return (Math.imul(lo ^ (hi << 7), 0x9e37_79b1) + index * 131 + (index >>> 8)) >>> 24 ^ (index & 0xff);
}

function checksum(tag: bigint, bytes: Uint8Array, from: number): bigint {
  if (tag === 0n) return 0n;
  // FNV-1a over the payload, folded with the tag: cheap, and any mixed-up byte changes it.
  let h = 0x811c_9dc5;
  for (let i = from; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x0100_0193);
  return (BigInt(h >>> 0) << 32n) ^ tag;
}

/** The whole object a set with this tag writes. */
export function encodeObject(tag: bigint, objectBytes: number): Uint8Array {
  const bytes = new Uint8Array(objectBytes);
  for (let i = OBJECT_HEADER_BYTES; i < objectBytes; i++) bytes[i] = payloadByte(tag, i);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, tag, true);
  view.setBigUint64(8, checksum(tag, bytes, OBJECT_HEADER_BYTES), true);
  return bytes;
}

/** The tag of an object as READ, or why it is not one whole write. */
export function decodeObject(bytes: Uint8Array): { tag: bigint } | { torn: string } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = view.getBigUint64(0, true);
  for (let i = OBJECT_HEADER_BYTES; i < bytes.length; i++) {
    if (bytes[i] !== payloadByte(tag, i)) return { torn: `byte ${i} does not belong to the write tagged ${tag.toString(16)}` };
  }
  if (view.getBigUint64(8, true) !== checksum(tag, bytes, OBJECT_HEADER_BYTES)) return { torn: `checksum does not match tag ${tag.toString(16)}` };
  return { tag };
}

/** One object-store operation as its client saw it (critical-section times, not lock times). */
export interface ObjectOpRecord {
  readonly client: string;
  readonly object: number;
  readonly kind: 'get' | 'set';
  /** Written by a set; read by a get (absent when the get read a torn object). */
  readonly tag?: bigint;
  readonly torn?: string;
  readonly csStartNs: number;
  readonly csEndNs: number;
}

export interface ObjectStoreCheck {
  readonly ok: boolean;
  readonly gets: number;
  readonly sets: number;
  readonly problems: readonly string[];
  /** Problems found, by kind, before the list was cut. */
  readonly counts: { readonly torn: number; readonly uncommitted: number; readonly stale: number; readonly finalState: number };
}

const MAX_PROBLEMS = 20;

/**
 * The content check of an object-store run. Under reader-writer exclusion every object is a
 * register whose writes are totally ordered by their critical sections, so:
 * - every get reads a whole object (no torn bytes);
 * - the write a get reads ended its critical section before the get's began (never a write
 *   still in flight), and is the latest write that did (never a stale one);
 * - after the run each object holds the last write (`final`: object → its tag now).
 * A set that skips its lock breaks the second rule as soon as it overlaps a get.
 */
export function checkObjectStore(records: readonly ObjectOpRecord[], final: ReadonlyMap<number, bigint | { torn: string }>): ObjectStoreCheck {
  const problems: string[] = [];
  const counts = { torn: 0, uncommitted: 0, stale: 0, finalState: 0 };
  const note = (kind: keyof typeof counts, text: string) => {
    counts[kind]++;
    if (problems.length < MAX_PROBLEMS) problems.push(text);
  };
  const setsByObject = new Map<number, ObjectOpRecord[]>();
  const setByTag = new Map<bigint, ObjectOpRecord>();
  let gets = 0;
  for (const r of records) {
    if (r.kind !== 'set') continue;
    let list = setsByObject.get(r.object);
    if (!list) setsByObject.set(r.object, (list = []));
    list.push(r);
    if (r.tag !== undefined) setByTag.set(r.tag, r);
  }
  for (const list of setsByObject.values()) list.sort((a, b) => a.csEndNs - b.csEndNs);
  for (const r of records) {
    if (r.kind !== 'get') continue;
    gets++;
    if (r.torn !== undefined || r.tag === undefined) {
      note('torn', `${r.client} read object ${r.object} torn: ${r.torn ?? 'no tag'}`);
      continue;
    }
    const sets = setsByObject.get(r.object) ?? [];
    const latest = latestEndedBy(sets, r.csStartNs);
    if (r.tag === 0n) {
      if (latest) note('stale', `${r.client} read object ${r.object} as never written at ${r.csStartNs} ns, after ${latest.client}'s write ended at ${latest.csEndNs} ns`);
      continue;
    }
    const writer = setByTag.get(r.tag);
    if (!writer || writer.object !== r.object) note('torn', `${r.client} read object ${r.object} with tag ${r.tag.toString(16)} that no set of it wrote`);
    else if (writer.csEndNs > r.csStartNs) note('uncommitted', `${r.client} read object ${r.object} written by ${writer.client}, whose critical section [${writer.csStartNs}, ${writer.csEndNs}] ns overlaps the read's from ${r.csStartNs} ns`);
    else if (latest && latest !== writer) note('stale', `${r.client} read object ${r.object} from ${writer.client}'s write, not the later one of ${latest.client} ended at ${latest.csEndNs} ns`);
  }
  for (const [object, sets] of setsByObject) {
    const last = sets[sets.length - 1]!;
    const now = final.get(object);
    if (now === undefined) continue;
    if (typeof now !== 'bigint') note('finalState', `object ${object} is torn after the run: ${now.torn}`);
    else if (now !== last.tag) note('finalState', `object ${object} holds tag ${now.toString(16)} after the run, not the last write's ${last.tag?.toString(16)} (${last.client})`);
  }
  const sets = records.length - gets;
  return { ok: counts.torn + counts.uncommitted + counts.stale + counts.finalState === 0, gets, sets, problems, counts };
}

/** The set with the greatest end ≤ t (sets sorted by end). */
function latestEndedBy(sets: readonly ObjectOpRecord[], t: number): ObjectOpRecord | undefined {
  let lo = 0;
  let hi = sets.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sets[mid]!.csEndNs <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? sets[lo - 1] : undefined;
}

/** Data-region bytes per memory node for the store. */
export function objectStoreItemBytes(spec: ObjectStoreSpec): number {
  return Math.ceil(spec.objectBytes / 8) * 8;
}
