/**
 * A map that keeps at most `max` entries: setting one more forgets the oldest (insertion order; a key
 * set again counts as new). For replies a client may never collect, such as a late duplicate ACK of
 * a request it already finished: without a bound they would pile up for the client's lifetime.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();
  /** Entries forgotten to stay within `max`. */
  evicted = 0;

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`BoundedMap: max must be a positive integer, got ${max}`);
  }

  get size(): number {
    return this.entries.size;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) {
      this.entries.delete(this.entries.keys().next().value as K);
      this.evicted++;
    }
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }
}
