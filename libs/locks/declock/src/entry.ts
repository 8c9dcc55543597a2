import { ConfigError } from '@lockfabric/ports';
import type { ClientAddress, LockMode } from '@lockfabric/ports';
import { VER_INIT } from './header.js';

/**
 * One 8-byte queue entry, written with a single aligned WRITE (little-endian word):
 *
 *   ver (63..48) | ts (47..32) | mode (31: 1 = writer) | cid (30..0)
 *
 * cid routes the grant message: node in bits 30..21, client in bits 20..0.
 *
 * The version is stored complemented (~ver): memory nodes hand out zero-filled regions, and a
 * zero word must read as the paper's initial entry, version −1 (0xFFFF, "never written"). So
 * the initial and the reset entry are both the all-zero word.
 */
export interface QueueEntry {
  readonly version: number;
  readonly ts: number;
  readonly mode: LockMode;
  readonly client: ClientAddress;
}

export type EntryState = 'valid' | 'obsolete' | 'overwritten';

const CID_CLIENT_BITS = 21;
const MAX_NODE = (1 << (31 - CID_CLIENT_BITS)) - 1;
const MAX_CLIENT = (1 << CID_CLIENT_BITS) - 1;
/** What a reset writes into every slot (and what fresh memory holds): version 0xFFFF, the rest zero. */
export const EMPTY_ENTRY_WORD = 0n;

export function assertEncodableClient(client: ClientAddress): void {
  if (client.node < 0 || client.node > MAX_NODE || client.client < 0 || client.client > MAX_CLIENT) {
    throw new ConfigError([`declock entries address clients with node ≤ ${MAX_NODE} and client ≤ ${MAX_CLIENT}, got ${client.node}/${client.client}`]);
  }
}

export function encodeEntry(entry: QueueEntry): bigint {
  const cid = (BigInt(entry.client.node) << BigInt(CID_CLIENT_BITS)) | BigInt(entry.client.client);
  return (BigInt(~entry.version & VER_INIT) << 48n) | (BigInt(entry.ts & 0xffff) << 32n) | (entry.mode === 'exclusive' ? 1n << 31n : 0n) | cid;
}

export function decodeEntry(word: bigint): QueueEntry {
  const cid = Number(word & 0x7fff_ffffn);
  return {
    version: ~Number((word >> 48n) & 0xffffn) & VER_INIT,
    ts: Number((word >> 32n) & 0xffffn),
    mode: (word >> 31n) & 1n ? 'exclusive' : 'shared',
    client: { node: cid >>> CID_CLIENT_BITS, client: cid & MAX_CLIENT },
  };
}

/**
 * Valid when written for this lap; obsolete when from an earlier lap or never written (0xFFFF);
 * overwritten when a later lap already reused the slot.
 */
export function classifyEntry(entry: QueueEntry, expectedVersion: number): EntryState {
  if (entry.version === expectedVersion) return 'valid';
  if (entry.version === VER_INIT || entry.version < expectedVersion) return 'obsolete';
  return 'overwritten';
}

export function entryToBytes(word: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, word, true);
  return bytes;
}

export function wordAt(bytes: Uint8Array, offset: number): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset, true);
}
