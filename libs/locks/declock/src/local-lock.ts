import type { LockMode, SpanContextRef } from '@lockfabric/ports';
import { AsyncMutex } from './async-mutex.js';
import type { CqlHold } from './cql-engine.js';

/**
 * What a local waiter is woken with: the lock itself (`granted`), the duty to take the CQL lock
 * for the node (`reacquire`), or `withdrawn` when its caller gave up before either.
 */
export type WakeResult =
  | { readonly kind: 'granted'; readonly handover: SpanContextRef | undefined }
  | { readonly kind: 'reacquire' }
  | { readonly kind: 'withdrawn' }
  /** The local lock was dropped (its hold reset past): start again on the node's new one. */
  | { readonly kind: 'retry' }
  /** The memory node restarted: this local lock belonged to the lost table. */
  | { readonly kind: 'table-lost' };

export class LocalWaiter {
  woken = false;
  readonly result: Promise<WakeResult>;
  private resolve!: (result: WakeResult) => void;

  constructor(
    readonly mode: LockMode,
    /** Acquisition timestamp (16-bit µs); also what its CQL entry carries if it reacquires. */
    readonly ts: number,
  ) {
    this.result = new Promise((resolve) => (this.resolve = resolve));
  }

  wake(result: WakeResult): void {
    if (this.woken) return;
    this.woken = true;
    this.resolve(result);
  }
}

/**
 * FREE: nobody holds or owns. PENDING: a local owner is taking the CQL lock. SHARED: readers hold
 * and new local readers may join. EXCLUSIVE: a writer holds, or a writer waits locally (so new
 * readers queue behind it).
 */
export type LocalState = 'free' | 'pending' | 'shared' | 'exclusive';

/** One lock's entry in a compute node's local lock table (paper §5.2). */
export class LocalLock {
  readonly mtx = new AsyncMutex();
  state: LocalState = 'free';
  /** Local clients holding the lock, or the owner that is taking it (PENDING). */
  holders = 0;
  /** The node's CQL membership while it holds the CQL lock. */
  cql: CqlHold | undefined;
  readonly wq: LocalWaiter[] = [];
  /** Cached earliest remote-waiter timestamp; undefined = none known. */
  rts: number | undefined;
  /** Local grants (handoffs, readers joining) since the node took the CQL lock: what bounded handoff policies count. */
  localGrants = 0;
  /** Set when its memory node restarted: the node's table dropped it, and it grants nothing more. */
  lost = false;

  remove(waiter: LocalWaiter): boolean {
    const index = this.wq.indexOf(waiter);
    if (index < 0) return false;
    this.wq.splice(index, 1);
    return true;
  }

  hasWaitingWriter(): boolean {
    return this.wq.some((waiter) => waiter.mode === 'exclusive');
  }
}
