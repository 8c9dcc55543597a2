import { NS_PER_MS } from '@lockfabric/ports';

/** The timer functions the queue uses; tests pass a manual one. */
export interface Timers {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Copies a delay or reorder fault holds back, each on its own timer. The number in flight is
 * bounded: past `maxInFlight`, `schedule` refuses (the caller drops and counts the copy), so a
 * fault with a long delay under heavy traffic cannot grow memory without limit.
 */
export class DelayedDeliveries<T> {
  private readonly pending = new Map<number, { readonly handle: unknown; readonly item: T }>();
  private nextId = 0;

  constructor(
    private readonly maxInFlight: number,
    private readonly deliver: (item: T) => void,
    private readonly timers: Timers = realTimers,
  ) {
    if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 0) throw new RangeError(`maxInFlight must be a non-negative integer, got ${maxInFlight}`);
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Delivers `item` after `delayNs`; false (and nothing scheduled) when the queue is full. */
  schedule(item: T, delayNs: number): boolean {
    if (this.pending.size >= this.maxInFlight) return false;
    const id = this.nextId++;
    const handle = this.timers.setTimeout(() => {
      this.pending.delete(id);
      this.deliver(item);
    }, delayNs / NS_PER_MS);
    this.pending.set(id, { handle, item });
    return true;
  }

  /** Drops everything still held without delivering it; returns how many copies that was. */
  discard(): number {
    const n = this.pending.size;
    for (const { handle } of this.pending.values()) this.timers.clearTimeout(handle);
    this.pending.clear();
    return n;
  }

  /** Delivers everything still held, now, in the order it was scheduled (graceful drain). */
  flush(): void {
    const held = [...this.pending.values()];
    this.pending.clear();
    for (const { handle, item } of held) {
      this.timers.clearTimeout(handle);
      this.deliver(item);
    }
  }
}
