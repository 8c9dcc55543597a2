import { slotOfTag } from './queue-state.js';

/**
 * Per-request registers: where the switch remembers, for a request (machine, task, request id),
 * a key of its last try and its entry's slot tag. They let one pass recognise a resent or
 * duplicated ACQUIRE (and a cancel) of a request already queued, without reading the queue
 * (README, "Lost GRANTs and NOTIFYs").
 *
 * The register is picked from the low bits of machine, task and request id, not from a hash:
 * requests never share one within 16 machines, 64 tasks per machine and a client's 16 latest
 * requests (a hash shared one in swarm seed 946). Beyond that, sharing costs time, never safety:
 * a request whose register another took is answered PUSH-BACK and queued again, its client
 * releases the extra entry's grant (`withRequestLedger`), and an entry's identity is always
 * checked in the slot arrays before a GRANT is sent again.
 */
export const NETLOCK_REQUEST_REGISTERS = 16_384;
const MACHINE_BITS = 4;
const TASK_BITS = 6;
const RID_BITS = 4;

/** 32-bit mix (a murmur3 finaliser): two tries or requests get different keys. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85eb_ca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2_ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function combine(...parts: readonly number[]): number {
  let h = 0x9747_b28c;
  for (const part of parts) h = mix((h ^ (part >>> 0)) + 0x9e37_79b9);
  return h >>> 0;
}

/** The register of request `rid` of (machine, task): 4 bits of machine, 6 of task, 4 of request id. */
export function requestIndex(machine: number, task: number, rid: number): number {
  const low = (value: number, bits: number) => (value >>> 0) & ((1 << bits) - 1);
  return (((low(machine, MACHINE_BITS) << TASK_BITS) | low(task, TASK_BITS)) << RID_BITS) | low(rid, RID_BITS);
}

/**
 * The key of one try of a request: who, its request id, and its attempt (the client counts the
 * PUSH-BACKs it got for the request, so a try the full queue refused is not taken for queued).
 * Never 0, the value of an empty register.
 */
export function requestKey(machine: number, task: number, rid: number, attempt: number): number {
  return combine(machine, task, rid, attempt) || 1;
}

/** Where a request's entry stands, as a lookup by its register found it. */
export type RequestPlace =
  | { readonly kind: 'absent' }
  | { readonly kind: 'waiting'; readonly slot: number }
  | { readonly kind: 'granted'; readonly slot: number; readonly lastOfRun: boolean }
  | { readonly kind: 'released'; readonly slot: number };

/** The slot a register's tag names when it lies in the queue [base, base + size), else undefined. */
export function slotInQueue(tag: number, base: number, size: number): number | undefined {
  const slot = slotOfTag(tag);
  return slot !== undefined && slot >= base && slot < base + size ? slot : undefined;
}
