import { SwitchControlError } from './errors.js';
import { errorMessage } from '@lockfabric/ports';

/** What a control plane may install as a table entry: plain JSON, so it crosses the wire unchanged. */
export type TableValue = number | string | boolean | null | readonly TableValue[] | { readonly [key: string]: TableValue };

export interface TableRange<V> {
  /** First key covered. */
  readonly start: number;
  /** First key past the range; `Infinity` covers everything from `start` up. */
  readonly end: number;
  readonly value: V;
}

export interface MatchTableOptions<V extends TableValue> {
  /** Checks and narrows a control-plane value; throw to refuse it. Defaults to accepting any value. */
  readonly parse?: (value: TableValue) => V;
}

/**
 * A match-action table keyed by an integer (machine id, lock id): exact entries, plus
 * non-overlapping half-open key ranges (lock-id partitions, the out-of-range fallback rule). An
 * exact entry wins over a range. Data-plane lookups are reads of control-plane state, so, unlike
 * register arrays, they are not limited per packet.
 */
export class MatchTable<V extends TableValue = TableValue> {
  private readonly exact = new Map<number, V>();
  /** Sorted by `start`, pairwise disjoint. */
  private readonly ranges: TableRange<V>[] = [];
  private readonly parser: ((value: TableValue) => V) | undefined;

  constructor(
    readonly name: string,
    options: MatchTableOptions<V> = {},
  ) {
    this.parser = options.parse;
  }

  get size(): number {
    return this.exact.size + this.ranges.length;
  }

  /** Validates a control-plane value with the table's parser. */
  accept(value: TableValue): V {
    if (!this.parser) return value as V;
    try {
      return this.parser(value);
    } catch (error) {
      const detail = errorMessage(error);
      throw new SwitchControlError(`table '${this.name}' refuses value ${JSON.stringify(value)}: ${detail}`, { cause: error });
    }
  }

  setEntry(key: number, value: V): void {
    this.checkKey(key);
    this.exact.set(key, value);
  }

  deleteEntry(key: number): boolean {
    return this.exact.delete(key);
  }

  /** Installs `[start, end) → value`; refuses a range overlapping an installed one. */
  setRange(start: number, end: number, value: V): void {
    this.checkKey(start);
    if (!(end > start) || !(Number.isInteger(end) || end === Infinity)) {
      throw new SwitchControlError(`table '${this.name}': range [${start}, ${end}) is empty or its end is not an integer`);
    }
    const at = this.firstEndingAfter(start);
    const next = this.ranges[at];
    if (next && next.start < end) {
      throw new SwitchControlError(
        `table '${this.name}': range [${start}, ${end}) overlaps installed range [${next.start}, ${next.end})`,
      );
    }
    this.ranges.splice(at, 0, { start, end, value });
  }

  /** Removes the range installed with exactly these bounds. */
  deleteRange(start: number, end: number): boolean {
    const at = this.ranges.findIndex((range) => range.start === start && range.end === end);
    if (at < 0) return false;
    this.ranges.splice(at, 1);
    return true;
  }

  lookup(key: number): V | undefined {
    const hit = this.exact.get(key);
    if (hit !== undefined) return hit;
    const range = this.ranges[this.firstEndingAfter(key)];
    return range && range.start <= key ? range.value : undefined;
  }

  entries(): { readonly exact: readonly (readonly [number, V])[]; readonly ranges: readonly TableRange<V>[] } {
    return { exact: [...this.exact].sort((a, b) => a[0] - b[0]), ranges: [...this.ranges] };
  }

  clear(): void {
    this.exact.clear();
    this.ranges.length = 0;
  }

  /** Index of the first range whose end is past `key` (binary search over disjoint sorted ranges). */
  private firstEndingAfter(key: number): number {
    let lo = 0;
    let hi = this.ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ranges[mid] as TableRange<V>).end <= key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private checkKey(key: number): void {
    if (!Number.isSafeInteger(key) || key < 0) {
      throw new SwitchControlError(`table '${this.name}': key must be a non-negative integer, got ${key}`);
    }
  }
}
