import type { LockId, Random } from '@lockfabric/ports';

/**
 * The random backoff of §7.4 (Appendix A.3): after the c-th consecutive bounce or abort on one
 * lock, wait uniformly in [0, min(R·2^(c−1), Lcap)]. The count is kept per lock and cleared by a
 * grant on that lock (A14).
 */
export class RetryBackoff {
  private readonly failures = new Map<LockId, number>();

  constructor(
    private readonly random: Random,
    private readonly baseNs: number,
    private readonly capNs: number,
  ) {}

  /** Counts one more failure on `lock` and draws the wait before the next attempt. */
  nextDelayNs(lock: LockId): number {
    const c = (this.failures.get(lock) ?? 0) + 1;
    this.failures.set(lock, c);
    // 2^(c-1) overflows to Infinity for huge c, which the cap absorbs.
    const boundNs = Math.min(this.baseNs * 2 ** (c - 1), this.capNs);
    return Math.floor(this.random.next() * boundNs);
  }

  consecutiveFailures(lock: LockId): number {
    return this.failures.get(lock) ?? 0;
  }

  granted(lock: LockId): void {
    this.failures.delete(lock);
  }
}
