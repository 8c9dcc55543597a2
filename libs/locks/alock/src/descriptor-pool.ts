import type { AcquireDeadline } from '@lockfabric/locks-common';
import { DESCRIPTORS_PER_SLOT } from './layout.js';

/**
 * Which of a client's queue descriptors are in use. A descriptor is busy from the acquire that
 * initialises it until its release returns — including after a timed-out acquire, whose queue
 * position is kept until the lock reaches it and is passed on (MCS waiters cannot simply leave).
 */
export class DescriptorPool {
  private readonly busy: boolean[] = Array.from({ length: DESCRIPTORS_PER_SLOT }, () => false);
  private readonly freed = new Set<() => void>();

  constructor(private readonly pollNs: number) {}

  /** A free descriptor index now, if there is one. */
  tryClaim(): number | undefined {
    const index = this.busy.indexOf(false);
    if (index < 0) return undefined;
    this.busy[index] = true;
    return index;
  }

  /** A free descriptor index, waiting for one until the deadline (then LockTimeoutError/LockAbortedError). */
  async claim(deadline: AcquireDeadline): Promise<number> {
    for (;;) {
      const index = this.tryClaim();
      if (index !== undefined) return index;
      await deadline.pause(this.pollNs);
    }
  }

  free(index: number): void {
    this.busy[index] = false;
    for (const wake of [...this.freed]) wake();
  }

  /** Calls `wake` on every `free` until the returned function is called: what an acquire waiting for a descriptor sleeps on. */
  onFree(wake: () => void): () => void {
    const entry = () => wake();
    this.freed.add(entry);
    return () => this.freed.delete(entry);
  }

  get inUse(): number {
    return this.busy.filter(Boolean).length;
  }
}
