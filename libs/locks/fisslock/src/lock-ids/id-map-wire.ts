import type { ClientAddress, LockId, Message } from '@lockfabric/ports';

/**
 * The id-map channel (spec §6.5) over the Mailbox port, on the node service's address: a client
 * sends `request` with the application lock id in `value`; the daemon answers `reply` with the
 * same `value` and the register index (lid) in `lock`, or `error` with a code and a short ASCII
 * reason. Op bytes (`data[0]`) are 0x60–0x6f, apart from srvlock's LocalOp codes (1–11) that
 * share the same service mailbox, so the node service can split its mail by op.
 */
export const ID_MAP_OP = { request: 0x60, reply: 0x61, error: 0x62 } as const;
const FIRST_OP = 0x60;
const LAST_OP = 0x6f;

export const ID_MAP_ERROR = { malformed: 1, full: 2, notHost: 3 } as const;
export type IdMapErrorCode = (typeof ID_MAP_ERROR)[keyof typeof ID_MAP_ERROR];

/** Longest reason text an error reply carries. */
const MAX_DETAIL_BYTES = 160;

/** True for every message of the id-map channel (requests, replies, errors, unknown ops of its range). */
export function isIdMapMessage(message: Message): boolean {
  const op = message.data?.[0];
  return op !== undefined && op >= FIRST_OP && op <= LAST_OP;
}

export function mapRequest(to: ClientAddress, appLockId: number): Omit<Message, 'from'> {
  return { kind: 'custom', to, lock: 0, value: BigInt(appLockId), data: Uint8Array.of(ID_MAP_OP.request) };
}

export function mapReply(to: ClientAddress, appLockId: number, lid: LockId): Omit<Message, 'from'> {
  return { kind: 'custom', to, lock: lid, value: BigInt(appLockId), data: Uint8Array.of(ID_MAP_OP.reply) };
}

export function mapError(to: ClientAddress, code: IdMapErrorCode, detail: string, appLockId?: number): Omit<Message, 'from'> {
  const text = [...detail.slice(0, MAX_DETAIL_BYTES)].map((c) => c.charCodeAt(0) & 0x7f);
  const message = { kind: 'custom' as const, to, lock: 0, data: Uint8Array.of(ID_MAP_OP.error, code, ...text) };
  return appLockId === undefined ? message : { ...message, value: BigInt(appLockId) };
}

export type DecodedRequest = { readonly ok: true; readonly appLockId: number } | { readonly ok: false; readonly detail: string; readonly appLockId?: number };

/** A request as the daemon reads it; anything else on the channel is described as malformed. */
export function decodeRequest(message: Message): DecodedRequest {
  const data = message.data;
  if (data?.[0] !== ID_MAP_OP.request) return { ok: false, detail: `op 0x${(data?.[0] ?? 0).toString(16)} is not an id-map request` };
  if (message.value === undefined) return { ok: false, detail: 'request carries no lock id (value)' };
  const appLockId = appLockIdOf(message.value);
  if (appLockId === undefined) return { ok: false, detail: `lock id ${message.value} is above 2^53-1` };
  if (data.length !== 1) return { ok: false, detail: `request has ${data.length} bytes of data, expected 1`, appLockId };
  return { ok: true, appLockId };
}

export type DecodedReply =
  | { readonly kind: 'mapped'; readonly appLockId: number; readonly lid: LockId }
  | { readonly kind: 'error'; readonly appLockId: number | undefined; readonly code: number; readonly detail: string };

/** A reply or error as a client reads it; undefined for other messages. */
export function decodeReply(message: Message): DecodedReply | undefined {
  const op = message.data?.[0];
  const appLockId = message.value === undefined ? undefined : appLockIdOf(message.value);
  if (op === ID_MAP_OP.reply && appLockId !== undefined) return { kind: 'mapped', appLockId, lid: message.lock };
  if (op !== ID_MAP_OP.error || !message.data) return undefined;
  const detail = String.fromCharCode(...message.data.subarray(2, 2 + MAX_DETAIL_BYTES));
  return { kind: 'error', appLockId, code: message.data[1] ?? 0, detail };
}

/** The application lock id a reply or error is about, if it names one. */
export function replyLockId(message: Message): number | undefined {
  const op = message.data?.[0];
  if ((op !== ID_MAP_OP.reply && op !== ID_MAP_OP.error) || message.value === undefined) return undefined;
  return appLockIdOf(message.value);
}

function appLockIdOf(value: bigint): number | undefined {
  return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
}
