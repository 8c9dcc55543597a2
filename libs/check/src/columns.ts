import { eventFromFlags, HistoryRecorder, packFlags } from './history.js';
import type { HistoryEvent } from './history.js';

/**
 * A history in time order, stored in columns. The checkers work on this form so that millions of
 * events cost typed-array scans and integer keys rather than objects and string keys.
 */
export class HistoryColumns {
  private constructor(
    readonly length: number,
    /** Client names; `clients[i]` indexes this list. */
    readonly clientNames: readonly string[],
    readonly clients: Uint32Array,
    readonly locks: Float64Array,
    /** Flag bytes, see `packFlags`. */
    readonly flags: Uint8Array,
    readonly times: Float64Array,
    /** Error names by event index (only `fail` events carry one). */
    readonly errors: ReadonlyMap<number, string>,
  ) {}

  /** Columns in time order; events with equal times keep their input order. */
  static from(input: HistoryInput): HistoryColumns {
    if (input instanceof HistoryColumns) return input;
    if (input instanceof HistoryRecorder) {
      const c = input.columns();
      return HistoryColumns.ordered(c.length, c.clientNames.slice(), c.clients.slice(), Float64Array.from(c.locks), c.flags.slice(), c.times.slice(), c.errors);
    }
    const n = input.length;
    const names: string[] = [];
    const index = new Map<string, number>();
    const clients = new Uint32Array(n);
    const locks = new Float64Array(n);
    const flags = new Uint8Array(n);
    const times = new Float64Array(n);
    const errors = new Map<number, string>();
    for (let i = 0; i < n; i++) {
      const event = input[i] as HistoryEvent;
      let id = index.get(event.client);
      if (id === undefined) {
        id = names.length;
        names.push(event.client);
        index.set(event.client, id);
      }
      clients[i] = id;
      locks[i] = event.lock;
      flags[i] = packFlags(event.mode, event.op, event.phase);
      times[i] = event.timeNs;
      if (event.error !== undefined) errors.set(i, event.error);
    }
    return HistoryColumns.ordered(n, names, clients, locks, flags, times, errors);
  }

  private static ordered(
    n: number,
    names: readonly string[],
    clients: Uint32Array,
    locks: Float64Array,
    flags: Uint8Array,
    times: Float64Array,
    errors: ReadonlyMap<number, string>,
  ): HistoryColumns {
    let sorted = true;
    for (let i = 1; i < n && sorted; i++) sorted = (times[i] as number) >= (times[i - 1] as number);
    if (sorted) return new HistoryColumns(n, names, clients, locks, flags, times, errors);
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
    const permuted = new Map<number, string>();
    const c = new Uint32Array(n);
    const l = new Float64Array(n);
    const f = new Uint8Array(n);
    const t = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const from = order[i] as number;
      c[i] = clients[from] as number;
      l[i] = locks[from] as number;
      f[i] = flags[from] as number;
      t[i] = times[from] as number;
      const error = errors.get(from);
      if (error !== undefined) permuted.set(i, error);
    }
    return new HistoryColumns(n, names, c, l, f, t, permuted);
  }

  clientName(index: number): string {
    return this.clientNames[this.clients[index] as number] as string;
  }

  event(index: number): HistoryEvent {
    return eventFromFlags(this.clientName(index), this.locks[index] as number, this.flags[index] as number, this.times[index] as number, this.errors.get(index));
  }
}

/** What every checker accepts: plain events (any order), a recorder, or prepared columns. */
export type HistoryInput = readonly HistoryEvent[] | HistoryRecorder | HistoryColumns;

/**
 * Per-client maps from an integer key to a value: pairs (client, lock) without building strings.
 * Lock ids are small integers, so V8 keeps these maps on its fast integer-key path.
 */
export class ClientKeyedMap<V> {
  private readonly perClient: (Map<number, V> | undefined)[] = [];

  get(client: number, key: number): V | undefined {
    return this.perClient[client]?.get(key);
  }

  set(client: number, key: number, value: V): void {
    let map = this.perClient[client];
    if (!map) {
      map = new Map();
      this.perClient[client] = map;
    }
    map.set(key, value);
  }

  delete(client: number, key: number): boolean {
    return this.perClient[client]?.delete(key) ?? false;
  }

  has(client: number, key: number): boolean {
    return this.perClient[client]?.has(key) ?? false;
  }

  /** Entries ordered by client, then by insertion. */
  *entries(): IterableIterator<[client: number, key: number, value: V]> {
    for (let client = 0; client < this.perClient.length; client++) {
      const map = this.perClient[client];
      if (map) for (const [key, value] of map) yield [client, key, value];
    }
  }
}
