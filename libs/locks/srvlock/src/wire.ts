import type { ClientAddress, LockMode, Message, NodeId } from '@lockfabric/ports';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';

/**
 * Packet conventions of the server lock managers (SrvLock, ParLock, NetLock's cold locks):
 * `machine` = sender node, `task` = requesting client index, `seq` = the client's request id
 * (rid, unique per client), `dst` = the lock manager's node. Replies carry the same task and rid.
 */

/** `release` flag: withdraw an acquire that timed out or was aborted (waiter removed, or holder released). */
export const FLAG_CANCEL = 1 << 0;
/** `grant` flag (NetLock): decided by the switch, so the release goes to the switch and is not acknowledged. */
export const FLAG_SWITCH = 1 << 1;
/** `grant` flag (NetLock): more shared waiters may follow; the grantee reflects a `notify` (recirculation). */
export const FLAG_CONTINUE = 1 << 2;

/** Operations of the node-local mailbox channel (`data[0]`): topology queries and ParLock's local path. */
export const LocalOp = {
  topologyQuery: 1,
  topologyReply: 2,
  acquire: 3,
  release: 4,
  cancel: 5,
  grant: 6,
  ack: 7,
  /** Failover: a client asks its node's service which compute nodes were declared dead. */
  viewQuery: 8,
  viewReply: 9,
  /** Failover: a client tells its node's service it holds / no longer holds a lock homed elsewhere (value = rid). */
  noteHeld: 10,
  noteReleased: 11,
  /** Try-only managers (the `rpc` baseline): the lock is held incompatibly, try again. */
  busy: 12,
} as const;
export type LocalOpCode = (typeof LocalOp)[keyof typeof LocalOp];

export function modeCode(mode: LockMode): number {
  return mode === 'exclusive' ? 1 : 0;
}

export function modeOf(code: number | undefined): LockMode {
  return code === 1 ? 'exclusive' : 'shared';
}

/** The node service of `node`, which answers topology queries and serves local requests. */
export function serviceAddress(node: NodeId): ClientAddress {
  return { node, client: SERVICE_CLIENT };
}

export function localOp(message: Message): number | undefined {
  return message.data?.[0];
}

/**
 * A mailbox reply (`op`: grant, ack or busy) stamped with the incarnation of the server that sent
 * it (u64 LE after the op byte); without `incarnation`, the op alone (read back as incarnation 0).
 */
export function encodeReply(op: number, incarnation?: number): Uint8Array {
  if (incarnation === undefined) return Uint8Array.of(op);
  const out = new Uint8Array(9);
  out[0] = op;
  new DataView(out.buffer).setBigUint64(1, BigInt(incarnation), true);
  return out;
}

/** The server incarnation a mailbox reply carries (0: none stamped). */
export function replyIncarnation(data: Uint8Array | undefined): number {
  if (!data || data.length < 9) return 0;
  return Number(new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(1, true));
}

/** Compute nodes as u16 pairs after the op byte (`op`: topologyReply, or viewReply for the dead ones). */
export function encodeNodes(nodes: readonly NodeId[], op: number = LocalOp.topologyReply): Uint8Array {
  const out = new Uint8Array(1 + nodes.length * 2);
  out[0] = op;
  nodes.forEach((node, i) => {
    out[1 + i * 2] = node & 0xff;
    out[2 + i * 2] = (node >> 8) & 0xff;
  });
  return out;
}

export function decodeNodes(data: Uint8Array): NodeId[] {
  const nodes: NodeId[] = [];
  for (let i = 1; i + 1 < data.length; i += 2) nodes.push((data[i] as number) | ((data[i + 1] as number) << 8));
  return nodes;
}
