/** Bytes of one page: the unit in which a region's memory is allocated, on its first non-zero store. */
export const PAGE_BYTES = 4096;

interface Page {
  readonly bytes: Uint8Array;
  readonly view: DataView;
}

/**
 * The bytes of one registered region, allocated a page at a time on the first store of a non-zero
 * value; a page never stored to reads as zeros. Most regions are mostly untouched (a node's 2 MB of
 * descriptor slots serves the handful of clients it hosts), and eager ArrayBuffers of that size made
 * V8 collect and recompile far more than the simulation itself needed. Word accesses are 8-byte
 * aligned and a page is a whole number of words, so a word never straddles two pages.
 */
export class PagedBytes {
  readonly #pages: (Page | undefined)[];
  #allocated = 0;

  /** `eager` allocates every page now, as regions used to be (the mutant the footprint tests catch). */
  constructor(
    readonly sizeBytes: number,
    private readonly eager = false,
  ) {
    this.#pages = new Array<Page | undefined>(Math.ceil(sizeBytes / PAGE_BYTES)).fill(undefined);
    if (eager) for (let index = 0; index < this.#pages.length; index++) this.#page(index);
  }

  /** ArrayBuffer bytes this region holds now. */
  get allocatedBytes(): number {
    return this.#allocated;
  }

  /** A copy of [at, at + length); the caller has checked the bounds. */
  read(at: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let done = 0; done < length; ) {
      const index = Math.floor((at + done) / PAGE_BYTES);
      const within = (at + done) % PAGE_BYTES;
      const count = Math.min(length - done, PAGE_BYTES - within);
      const page = this.#pages[index];
      if (page) out.set(page.bytes.subarray(within, within + count), done);
      done += count;
    }
    return out;
  }

  write(at: number, data: Uint8Array): void {
    for (let done = 0; done < data.length; ) {
      const index = Math.floor((at + done) / PAGE_BYTES);
      const within = (at + done) % PAGE_BYTES;
      const count = Math.min(data.length - done, PAGE_BYTES - within);
      const chunk = data.subarray(done, done + count);
      const page = this.#pages[index] ?? (chunk.some((byte) => byte !== 0) ? this.#page(index) : undefined);
      page?.bytes.set(chunk, within);
      done += count;
    }
  }

  getU64(at: number): bigint {
    const page = this.#pages[Math.floor(at / PAGE_BYTES)];
    return page ? page.view.getBigUint64(at % PAGE_BYTES, true) : 0n;
  }

  setU64(at: number, value: bigint): void {
    const index = Math.floor(at / PAGE_BYTES);
    const page = this.#pages[index] ?? (value === 0n ? undefined : this.#page(index));
    page?.view.setBigUint64(at % PAGE_BYTES, value, true);
  }

  /** Zeroes every byte and gives the pages back (a restart of the memory node). */
  clear(): void {
    this.#pages.fill(undefined);
    this.#allocated = 0;
    if (this.eager) for (let index = 0; index < this.#pages.length; index++) this.#page(index);
  }

  #page(index: number): Page {
    const buffer = new ArrayBuffer(Math.min(PAGE_BYTES, this.sizeBytes - index * PAGE_BYTES));
    const page = { bytes: new Uint8Array(buffer), view: new DataView(buffer) };
    this.#pages[index] = page;
    this.#allocated += buffer.byteLength;
    return page;
  }
}
