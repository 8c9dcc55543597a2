import type { PacketType } from '@lockfabric/ports';

/** Every packet type of the ports, in a fixed order: the index of a type in per-type counter arrays. */
export const PACKET_TYPES = [
  'acquire',
  'release',
  'grant',
  'reject',
  'ack',
  'transfer',
  'free',
  'push-back',
  'notify',
  'probe',
] as const satisfies readonly PacketType[];

// compile-time guard: fails to type-check if the ports gain a packet type not listed above
const _everyTypeListed: [Exclude<PacketType, (typeof PACKET_TYPES)[number]>] extends [never] ? true : never = true;

const INDEX = new Map<string, number>(PACKET_TYPES.map((type, index) => [type, index]));

export function isPacketType(value: unknown): value is PacketType {
  return typeof value === 'string' && INDEX.has(value);
}

/** Position of `type` in {@link PACKET_TYPES}. */
export function packetTypeIndex(type: PacketType): number {
  const index = INDEX.get(type);
  if (index === undefined) throw new RangeError(`unknown packet type '${type}'`);
  return index;
}
