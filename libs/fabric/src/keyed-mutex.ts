/**
 * Async mutual exclusion per key: holders of one key run one at a time, in arrival order.
 * Entries disappear when their queue drains, so the map only holds keys in use.
 */
export class KeyedMutex<K> {
  readonly #tails = new Map<K, Promise<void>>();

  async run<T>(key: K, body: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous ? previous.then(() => done) : done;
    this.#tails.set(key, tail);
    try {
      if (previous) await previous;
      return await body();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Keys with a holder or waiters (for tests and leak checks). */
  get size(): number {
    return this.#tails.size;
  }
}
