import type { ClientAddress, DescriptorDirectory, NodeId, RemoteAddr } from '@lockfabric/ports';
import type { NodeMemory } from './node-memory.js';
import { deriveRkey } from './rkey.js';

/** Bytes of one client's descriptor slot: room for 16 MCS queue nodes (one per lock a 2PL transaction holds, at most 16), or ALock descriptors and a few flags. */
export const DESCRIPTOR_SLOT_BYTES = 512;
/** Client indexes a node can host descriptor slots for. */
export const DESCRIPTOR_SLOTS_PER_NODE = 4096;

/**
 * Where descriptor slots live, the same on every substrate so any node can compute any client's
 * slot address: region 1 of a memory node (region 0 is the lock table), region 0 of a compute node.
 */
export function descriptorRegionIndex(isMemoryNode: boolean): number {
  return isMemoryNode ? 1 : 0;
}

/** Registers the descriptor region of `memory`; it must be the region index the layout above says. */
export function registerDescriptorRegion(memory: NodeMemory, isMemoryNode: boolean): void {
  const info = memory.register(DESCRIPTOR_SLOT_BYTES * DESCRIPTOR_SLOTS_PER_NODE);
  const expected = descriptorRegionIndex(isMemoryNode);
  if (info.region !== expected) {
    throw new RangeError(`descriptor region of node ${memory.node} registered as region ${info.region}, expected ${expected}`);
  }
}

export class FixedDescriptorDirectory implements DescriptorDirectory {
  readonly slotBytes = DESCRIPTOR_SLOT_BYTES;
  readonly self: RemoteAddr;

  constructor(
    self: ClientAddress,
    private readonly isMemoryNode: (node: NodeId) => boolean,
  ) {
    this.self = this.of(self);
  }

  of(client: ClientAddress): RemoteAddr {
    if (client.client < 0 || client.client >= DESCRIPTOR_SLOTS_PER_NODE) {
      throw new RangeError(`client ${client.client} has no descriptor slot (a node hosts ${DESCRIPTOR_SLOTS_PER_NODE})`);
    }
    const region = descriptorRegionIndex(this.isMemoryNode(client.node));
    return { node: client.node, region, rkey: deriveRkey(client.node, region), offset: client.client * DESCRIPTOR_SLOT_BYTES };
  }
}
