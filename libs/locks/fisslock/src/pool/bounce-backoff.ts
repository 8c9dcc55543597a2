import type { LockId } from '@lockfabric/ports';

/**
 * The first bounce for a lock goes back at once (the usual race with an agent in flight, §5.3);
 * further ones in a row back off exponentially up to the RTO. While the decider points at a
 * machine without the agent (a lost ① GRANT until its abort frees the lock), packets would
 * otherwise circle switch ↔ machine every few µs.
 */
export class BounceBackoff {
  /** Bounces per lock in a row, and when the last one was. */
  private readonly streaks = new Map<LockId, { count: number; lastNs: number }>();

  constructor(
    private readonly baseNs: number,
    private readonly rtoNs: number,
  ) {}

  delayNs(lid: LockId, nowNs: number): number {
    if (this.baseNs <= 0) return 0;
    const streak = this.streaks.get(lid);
    if (!streak || nowNs - streak.lastNs > 2 * this.rtoNs) {
      this.streaks.set(lid, { count: 1, lastNs: nowNs });
      return 0;
    }
    streak.lastNs = nowNs;
    streak.count++;
    return Math.min(this.rtoNs, this.baseNs * 2 ** Math.min(20, streak.count - 2));
  }

  /** The lock's agent arrived: the next bounce starts a new streak. */
  forget(lid: LockId): void {
    this.streaks.delete(lid);
  }
}

/**
 * Where a bounced copy that the back-off deferred goes when its delay ends: on the link it was
 * bounced on, or nowhere if a recovery (S1–S3) replaced that link meanwhile. S1 took every live
 * request from its client and S2 queued or aborted it, so a deferred copy is stale then, and one of
 * a failed machine would put the dead task back in a queue (swarm lossy seed 268).
 */
export function deferredBounceLink<L>(bouncedOn: L, current: L): L | undefined {
  return current === bouncedOn ? current : undefined;
}
