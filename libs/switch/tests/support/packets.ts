import type { LockPacket, PacketType } from '@lockfabric/ports';

/** A lock packet with defaults for the fields a test does not care about. */
export function packet(overrides: Partial<LockPacket> & { type?: PacketType } = {}): LockPacket {
  return { type: 'acquire', lock: 0, machine: 1, task: 0, mode: 'exclusive', incarnation: 0, seq: 0, flags: 0, ...overrides };
}
