import { describe, expect, it } from 'vitest';
import { DESCRIPTOR_SLOTS_PER_NODE, DESCRIPTOR_SLOT_BYTES, FixedDescriptorDirectory, registerDescriptorRegion } from './descriptor-directory.js';
import { NodeMemory } from './node-memory.js';
import type { NodeMemoryOptions } from './node-memory.js';
import { PAGE_BYTES } from './paged-bytes.js';

const NODE = 2;
const notMemoryNode = () => false;

/** A compute node whose first `clients` clients each fill their descriptor slot; its region's ArrayBuffer bytes after. */
function descriptorBytes(clients: number, options: NodeMemoryOptions = {}): { memory: NodeMemory; bytes: number } {
  const memory = new NodeMemory(NODE, options);
  registerDescriptorRegion(memory, false);
  const data = new Uint8Array(DESCRIPTOR_SLOT_BYTES).fill(0xa5);
  for (let client = 0; client < clients; client++) {
    const slot = new FixedDescriptorDirectory({ node: NODE, client }, notMemoryNode).self;
    expect(memory.execute({ op: 'write', addr: slot, data }, NODE).status).toBe('ok');
  }
  return { memory, bytes: memory.allocatedBytes(0) };
}

/** Whole pages the slots of `clients` clients span. */
const bound = (clients: number) => Math.ceil((clients * DESCRIPTOR_SLOT_BYTES) / PAGE_BYTES) * PAGE_BYTES;

describe('descriptor region footprint', () => {
  it('a registered region nobody writes holds no ArrayBuffer bytes', () => {
    expect(descriptorBytes(0).bytes).toBe(0);
  });

  it.each([1, 8, 64])('a node hosting %i clients holds only the pages of their slots', (clients) => {
    const { bytes } = descriptorBytes(clients);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(bound(clients));
  });

  it('catches the mutant that allocates the whole 2 MB region eagerly', () => {
    const { bytes } = descriptorBytes(8, { mutantEagerRegions: true });
    expect(bytes).toBe(DESCRIPTOR_SLOT_BYTES * DESCRIPTOR_SLOTS_PER_NODE);
    expect(bytes).toBeGreaterThan(bound(8));
  });

  it('a WRITE of zeros and a reset both zero a slot that was written', () => {
    const { memory } = descriptorBytes(2);
    const slot1 = new FixedDescriptorDirectory({ node: NODE, client: 1 }, notMemoryNode).self;
    expect(memory.execute({ op: 'write', addr: slot1, data: new Uint8Array(DESCRIPTOR_SLOT_BYTES) }, NODE).status).toBe('ok');
    expect(memory.execute({ op: 'read', addr: slot1, length: DESCRIPTOR_SLOT_BYTES }, NODE).data).toEqual(new Uint8Array(DESCRIPTOR_SLOT_BYTES));
    const slot0 = { ...slot1, offset: 0 };
    expect(memory.cpuLoad(slot0)).toBe(0xa5a5_a5a5_a5a5_a5a5n);
    memory.reset(0);
    expect(memory.cpuLoad(slot0)).toBe(0n);
    expect(memory.allocatedBytes(0)).toBe(0);
  });
});
