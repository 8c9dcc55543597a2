import { SwitchControlError } from '../../errors.js';

/**
 * The lock-id mapping service (spec §6.5): sparse application lock ids get dense register
 * indexes first come first served; once the switch's `capacity` is used up, new ids get indexes
 * at or above it, which the decider sends to the fallback lock managers (§6.6). Keeps the
 * reverse map for recovery and tools. Clients cache answers in a {@link LockIdCache}.
 */
export class LockIdMap {
  private readonly forward = new Map<number, number>();
  private readonly reverse = new Map<number, number>();

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 0) throw new SwitchControlError(`lock-id map: capacity must be a non-negative integer, got ${capacity}`);
  }

  get size(): number {
    return this.forward.size;
  }

  /** The dense index of `appLockId`, allocating the next one on first use. */
  map(appLockId: number): number {
    const known = this.forward.get(appLockId);
    if (known !== undefined) return known;
    const lid = this.forward.size;
    this.forward.set(appLockId, lid);
    this.reverse.set(lid, appLockId);
    return lid;
  }

  /** True when `lid` is decided on the switch, false when it falls back to a server lock manager. */
  onSwitch(lid: number): boolean {
    return lid < this.capacity;
  }

  appLockId(lid: number): number | undefined {
    return this.reverse.get(lid);
  }
}

/** A client's cache in front of the mapping service: one lookup per application id. */
export class LockIdCache {
  private readonly cached = new Map<number, number>();
  lookups = 0;

  constructor(private readonly service: (appLockId: number) => number) {}

  resolve(appLockId: number): number {
    const hit = this.cached.get(appLockId);
    if (hit !== undefined) return hit;
    this.lookups++;
    const lid = this.service(appLockId);
    this.cached.set(appLockId, lid);
    return lid;
  }
}
