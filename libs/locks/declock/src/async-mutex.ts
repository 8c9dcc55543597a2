/**
 * A FIFO mutex for coroutines of one compute node. Messages keep flowing while a coroutine waits
 * here (each client's inbox pump runs independently), which is what the paper's coroutine-aware
 * mutex must guarantee to avoid a cross-node deadlock.
 */
export class AsyncMutex {
  private locked = false;
  private readonly waiters: (() => void)[] = [];

  lock(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Hands the mutex straight to the oldest waiter, if any. */
  unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.locked = false;
  }

  get isLocked(): boolean {
    return this.locked;
  }
}
