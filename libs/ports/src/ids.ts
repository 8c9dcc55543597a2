/** A machine on the fabric: memory node, compute node or switch host. Stable for a deployment. */
export type NodeId = number;
/** Lock ids are dense integers `0 … lockCount-1`; sparse ids are mapped by the protocol that allows them. */
export type LockId = number;

export type LockMode = 'shared' | 'exclusive';

/** A lock client (a "task" in the papers): one thread of lock operations on a compute node. */
export interface ClientAddress {
  readonly node: NodeId;
  readonly client: number;
}

export const PROTOCOL_IDS = [
  'caslock',
  'dslr',
  'dslr-backoff',
  'mcs',
  'drtm',
  'shiftlock',
  'declock',
  'declock-cql',
  'alock',
  'fisslock',
  'netlock',
  'srvlock',
  'parlock',
  'redlock',
  'rma-rw',
  'ncosed',
  'sherman',
  'rpc',
  'traditional',
  'traditional-ro',
] as const;
export type ProtocolId = (typeof PROTOCOL_IDS)[number];

export function isProtocolId(value: string): value is ProtocolId {
  return (PROTOCOL_IDS as readonly string[]).includes(value);
}

export function clientKey(address: ClientAddress): string {
  return `${address.node}/${address.client}`;
}
