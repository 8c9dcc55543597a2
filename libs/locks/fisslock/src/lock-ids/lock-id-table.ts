import { ConfigError } from '@lockfabric/ports';
import type { LockId } from '@lockfabric/ports';

/** What `map` did: the lid, and whether this call allocated it. */
export interface MapOutcome {
  readonly lid: LockId;
  readonly fresh: boolean;
}

const INITIAL_REVERSE_SLOTS = 1_024;

/**
 * The id-map daemon's table (spec §6.5): application lock ids get register indexes (lids) first
 * come first served, so the n-th new id gets lid n. Lids below `capacity` are decided on the
 * switch; the later ones are out of range and served by the ParLock fallback (§6.6). The reverse
 * map (lid → application id) is a dense array, since lids are allocated without gaps. At most
 * `maxEntries` ids are mapped; after that new ids are refused (the table is the daemon's memory
 * bound).
 */
export class LockIdTable {
  private readonly forward = new Map<number, LockId>();
  private reverse = new Float64Array(INITIAL_REVERSE_SLOTS);

  constructor(
    readonly capacity: number,
    readonly maxEntries: number,
  ) {
    const problems: string[] = [];
    if (!Number.isSafeInteger(capacity) || capacity < 0) problems.push(`lock-id table: capacity must be a whole number ≥ 0, got ${capacity}`);
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) problems.push(`lock-id table: maxEntries must be a whole number ≥ 1, got ${maxEntries}`);
    if (problems.length > 0) throw new ConfigError(problems);
  }

  get size(): number {
    return this.forward.size;
  }

  /** The lid of `appLockId`, allocated on first use; undefined when the id is new and the table is full. */
  map(appLockId: number): MapOutcome | undefined {
    const known = this.forward.get(appLockId);
    if (known !== undefined) return { lid: known, fresh: false };
    if (this.forward.size >= this.maxEntries) return undefined;
    const lid = this.forward.size;
    this.forward.set(appLockId, lid);
    if (lid >= this.reverse.length) this.grow();
    this.reverse[lid] = appLockId;
    return { lid, fresh: true };
  }

  lookup(appLockId: number): LockId | undefined {
    return this.forward.get(appLockId);
  }

  /** The application id mapped to `lid` (tools, recovery). */
  appLockId(lid: LockId): number | undefined {
    return Number.isInteger(lid) && lid >= 0 && lid < this.forward.size ? this.reverse[lid] : undefined;
  }

  /** True when `lid` is decided on the switch, false when a fallback manager serves it. */
  onSwitch(lid: LockId): boolean {
    return lid < this.capacity;
  }

  private grow(): void {
    const next = new Float64Array(Math.min(this.reverse.length * 2, Math.max(this.maxEntries, this.reverse.length + 1)));
    next.set(this.reverse);
    this.reverse = next;
  }
}
