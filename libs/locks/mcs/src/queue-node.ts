import type { RemoteAddr, SpanContextRef } from '@lockfabric/ports';
import { ENDPOINT_INDEX_BITS } from './lock-entry.js';

/**
 * A queue node: 32 bytes inside its client's descriptor slot (16 fit a 512-byte slot: a client holds one per lock, up to the 16 of a 2PL transaction), on the
 * client's own node. Peers reach it with WRITEs; the owner reads it with CPU loads.
 *
 *   +0   next      pointer to the successor's queue node, written by the successor when it links
 *   +8   traceId   two words: the W3C trace id of the releaser's `lock.handover` span (0 if none)
 *   +24  grant     non-zero once the predecessor hands over: that span's id, or GRANT_MARK
 *
 * The handover is one 24-byte WRITE of [traceId, grant] so the trace context arrives with the
 * grant; the grant word is last, where a poller looks. The trace flags do not fit and are taken
 * as "sampled" by the receiver.
 */
export const QUEUE_NODE_BYTES = 32;
export const NEXT_OFFSET = 0;
export const HANDOVER_OFFSET = 8;
export const HANDOVER_BYTES = 24;
export const GRANT_OFFSET = 24;
/** Grant word of a handover that carries no trace context. */
export const GRANT_MARK = 1n;

/** Queue nodes that fit a descriptor slot of `slotBytes`, capped by what a pointer can name. */
export function queueNodesPerSlot(slotBytes: number): number {
  return Math.min(Math.floor(slotBytes / QUEUE_NODE_BYTES), 2 ** ENDPOINT_INDEX_BITS);
}

export function fieldAddr(slot: RemoteAddr, index: number, fieldOffset: number): RemoteAddr {
  return { ...slot, offset: slot.offset + index * QUEUE_NODE_BYTES + fieldOffset };
}

const HEX16 = /^[0-9a-f]{16}$/;

/** The [traceId, grant] bytes a releaser WRITEs into its successor's queue node. */
export function encodeHandover(context: SpanContextRef | undefined): Uint8Array {
  const bytes = new Uint8Array(HANDOVER_BYTES);
  const view = new DataView(bytes.buffer);
  const traced = context !== undefined && /^[0-9a-f]{32}$/.test(context.traceId) && HEX16.test(context.spanId) && /[1-9a-f]/.test(context.spanId);
  if (traced) {
    view.setBigUint64(0, BigInt(`0x${context.traceId.slice(0, 16)}`), true);
    view.setBigUint64(8, BigInt(`0x${context.traceId.slice(16)}`), true);
  }
  view.setBigUint64(16, traced ? BigInt(`0x${context.spanId}`) : GRANT_MARK, true);
  return bytes;
}

/** The releaser's span context from the words of a granted queue node, when it sent one. */
export function decodeHandover(traceHigh: bigint, traceLow: bigint, grant: bigint): SpanContextRef | undefined {
  if (grant === 0n || grant === GRANT_MARK || (traceHigh === 0n && traceLow === 0n)) return undefined;
  const hex = (word: bigint) => word.toString(16).padStart(16, '0');
  return { traceId: hex(traceHigh) + hex(traceLow), spanId: hex(grant), traceFlags: 1 };
}
