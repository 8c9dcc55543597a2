/**
 * A map from keys to "busy until" times that forgets entries once they are in the past. Callers pass
 * a non-decreasing `nowNs`; a sweep runs when the map has doubled since the last one, so the cost is
 * O(1) amortised per `set` and the size stays bounded by the entries still in the future.
 */
export class HorizonMap<K> {
  readonly #map = new Map<K, number>();
  #limit: number;

  constructor(readonly minLimit = 1024) {
    this.#limit = minLimit;
  }

  get(key: K): number | undefined {
    return this.#map.get(key);
  }

  set(key: K, untilNs: number, nowNs: number): void {
    this.#map.set(key, untilNs);
    if (this.#map.size > this.#limit) this.prune(nowNs);
  }

  /** Drops every entry whose time is at or before `nowNs`. */
  prune(nowNs: number): void {
    for (const [key, untilNs] of this.#map) if (untilNs <= nowNs) this.#map.delete(key);
    this.#limit = Math.max(this.minLimit, 2 * this.#map.size);
  }

  clear(): void {
    this.#map.clear();
    this.#limit = this.minLimit;
  }

  get size(): number {
    return this.#map.size;
  }
}
