import { MAX_SLOTS, nextGeneration } from './tail-pointer.js';

/**
 * A client's K receive endpoints (spec A4, A22). A writer acquisition occupies one slot from its
 * enqueue until its release has handed over; each enqueue on a slot uses a fresh generation.
 */
export class EndpointPool {
  private readonly busy: boolean[];
  private readonly generations: number[];

  constructor(readonly count: number) {
    if (!Number.isInteger(count) || count < 1 || count > MAX_SLOTS) throw new RangeError(`endpoints must be 1..${MAX_SLOTS}, got ${count}`);
    this.busy = new Array<boolean>(count).fill(false);
    this.generations = new Array<number>(count).fill(0);
  }

  /** The lowest free slot, now busy; undefined when all K are in use. */
  take(): number | undefined {
    const slot = this.busy.indexOf(false);
    if (slot < 0) return undefined;
    this.busy[slot] = true;
    return slot;
  }

  free(slot: number): void {
    this.busy[slot] = false;
  }

  /** Moves `slot` to its next incarnation and returns that generation. */
  advance(slot: number): number {
    const generation = nextGeneration(this.generations[slot] ?? 0);
    this.generations[slot] = generation;
    return generation;
  }

  inUse(): number {
    return this.busy.filter(Boolean).length;
  }
}
