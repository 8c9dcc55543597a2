import { ConfigError, lockAddress } from '@lockfabric/ports';
import type { LockId, LockTableLayout, RemoteAddr } from '@lockfabric/ports';
import { MAX_CAPACITY, MIN_CAPACITY } from './header.js';

export const HEADER_BYTES = 8;
export const ENTRY_BYTES = 8;

/**
 * Where one lock's CQL state lives inside its lock-table entry (`entryBytes` per lock):
 *
 *   offset 0           header (8 B)
 *   offset 8 … 8+8C    queue entries 0 … C-1
 *   offset 8+8C        spare word (hierarchical declock only)
 *
 * Header and queue are adjacent so one READ fetches both (prefetch, refetch). Only lock 0's spare
 * word is used: it is the clock-sync counter on lock 0's memory node. Nothing lives outside the
 * table, so everything is found from `lockAddress(layout, lock)` and the capacity.
 */
export class CqlTable {
  readonly queueBytes: number;

  constructor(
    readonly layout: LockTableLayout,
    readonly capacity: number,
    readonly spareWord: boolean,
  ) {
    this.queueBytes = capacity * ENTRY_BYTES;
    const needed = entryBytesFor(capacity, spareWord);
    if (layout.entryBytes < needed) {
      throw new ConfigError([`declock capacity ${capacity} needs ${needed} bytes per lock entry, the lock table has ${layout.entryBytes}`]);
    }
  }

  header(lock: LockId): RemoteAddr {
    return lockAddress(this.layout, lock);
  }

  queue(lock: LockId): RemoteAddr {
    return offsetBy(this.header(lock), HEADER_BYTES);
  }

  entry(lock: LockId, slot: number): RemoteAddr {
    return offsetBy(this.header(lock), HEADER_BYTES + slot * ENTRY_BYTES);
  }

  /** The clock-sync counter: the spare word of lock 0. */
  syncCounter(): RemoteAddr {
    if (!this.spareWord) throw new RangeError('this declock table has no spare word for a sync counter');
    return offsetBy(this.header(0), HEADER_BYTES + this.queueBytes);
  }
}

/** Bytes one lock takes for capacity C: 8 + 8C, plus 8 for the spare word. */
export function entryBytesFor(capacity: number, spareWord: boolean): number {
  return HEADER_BYTES + capacity * ENTRY_BYTES + (spareWord ? 8 : 0);
}

/** The largest power-of-two capacity whose lock state fits `entryBytes`; 0 when none does. */
export function capacityFitting(entryBytes: number, spareWord: boolean): number {
  let capacity = 0;
  for (let c = MIN_CAPACITY; c <= MAX_CAPACITY && entryBytesFor(c, spareWord) <= entryBytes; c *= 2) capacity = c;
  return capacity;
}

function offsetBy(addr: RemoteAddr, bytes: number): RemoteAddr {
  return { node: addr.node, region: addr.region, rkey: addr.rkey, offset: addr.offset + bytes };
}

/**
 * The queue capacity a run needs: the one asked for with `--opt capacity`, else the smallest power
 * of two that holds `contenders`, never below the protocol's default. Past MAX_CAPACITY the client
 * factory refuses the run with the problem listed.
 */
export function capacityFor(requested: unknown, contenders: number, fallback: number): number {
  const asked = typeof requested === 'string' && requested.trim() !== '' ? Number(requested) : requested;
  if (typeof asked === 'number' && Number.isInteger(asked) && asked > 0) return asked;
  let capacity = fallback;
  while (capacity < contenders && capacity < MAX_CAPACITY) capacity *= 2;
  return capacity;
}
