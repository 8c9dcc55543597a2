import { describe, expect, it } from 'vitest';
import { PAGE_BYTES, PagedBytes } from './paged-bytes.js';

describe('PagedBytes', () => {
  it('reads zeros from pages never stored to and allocates none for them', () => {
    const store = new PagedBytes(3 * PAGE_BYTES + 8);
    expect(store.read(0, 3 * PAGE_BYTES + 8)).toEqual(new Uint8Array(3 * PAGE_BYTES + 8));
    expect(store.getU64(3 * PAGE_BYTES)).toBe(0n);
    expect(store.allocatedBytes).toBe(0);
  });

  it('stores of zeros into untouched pages allocate nothing', () => {
    const store = new PagedBytes(2 * PAGE_BYTES);
    store.setU64(8, 0n);
    store.write(PAGE_BYTES - 4, new Uint8Array(16));
    expect(store.allocatedBytes).toBe(0);
  });

  it('a write across a page boundary lands in both pages and reads back whole', () => {
    const store = new PagedBytes(4 * PAGE_BYTES);
    const data = Uint8Array.from({ length: 24 }, (_, i) => i + 1);
    store.write(2 * PAGE_BYTES - 12, data);
    expect(store.allocatedBytes).toBe(2 * PAGE_BYTES);
    expect(store.read(2 * PAGE_BYTES - 16, 32)).toEqual(Uint8Array.from([0, 0, 0, 0, ...data, 0, 0, 0, 0]));
    expect(store.getU64(2 * PAGE_BYTES)).toBe(0x1413_1211_100f_0e0dn);
  });

  it('a short last page holds only the bytes of the region', () => {
    const store = new PagedBytes(PAGE_BYTES + 16);
    store.setU64(PAGE_BYTES + 8, 5n);
    expect(store.allocatedBytes).toBe(16);
    expect(store.getU64(PAGE_BYTES + 8)).toBe(5n);
  });

  it('clear zeroes everything and gives the pages back; eager keeps them all', () => {
    const lazy = new PagedBytes(2 * PAGE_BYTES);
    lazy.setU64(PAGE_BYTES, 9n);
    lazy.clear();
    expect(lazy.getU64(PAGE_BYTES)).toBe(0n);
    expect(lazy.allocatedBytes).toBe(0);
    const eager = new PagedBytes(2 * PAGE_BYTES, true);
    expect(eager.allocatedBytes).toBe(2 * PAGE_BYTES);
    eager.setU64(0, 1n);
    eager.clear();
    expect(eager.getU64(0)).toBe(0n);
    expect(eager.allocatedBytes).toBe(2 * PAGE_BYTES);
  });
});
