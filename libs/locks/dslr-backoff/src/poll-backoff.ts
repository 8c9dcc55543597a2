import type { PollPacing, PollSchedule } from '@lockfabric/lock-dslr';
import type { Clock, Random } from '@lockfabric/ports';

/**
 * DSLR+'s poll pacing, as the DecLock paper evaluates it (SMART's truncated exponential backoff,
 * DecLock spec §1.3): the wait before each READ starts at `initialNs` and doubles per poll, capped
 * at `t_max`, plus a uniform jitter in [0, jitterNs). `t_max` adapts per client: every `retuneNs`
 * of its clock, it doubles when more than `highRatio` of the window's lock-word accesses failed to
 * show a grant and halves below `lowRatio`, staying within [capMinNs, capMaxNs].
 */
export interface PollBackoffPolicy {
  readonly initialNs: number;
  readonly capMinNs: number;
  readonly capMaxNs: number;
  readonly jitterNs: number;
  readonly retuneNs: number;
  readonly highRatio: number;
  readonly lowRatio: number;
}

/** The artifact's values: 100 ns doubling, t_max in [100 ns, 3.2 µs], jitter 0–2 µs, watermarks 0.7 / 0.5; 1 ms windows as in SMART. */
export const DSLR_PLUS_POLICY: PollBackoffPolicy = Object.freeze({
  initialNs: 100,
  capMinNs: 100,
  capMaxNs: 3_200,
  jitterNs: 2_000,
  retuneNs: 1_000_000,
  highRatio: 0.7,
  lowRatio: 0.5,
});

export class TruncatedExponentialPacing implements PollPacing {
  private capNs: number;
  private windowStartNs: number;
  private attempts = 0;
  private failures = 0;

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly policy: PollBackoffPolicy = DSLR_PLUS_POLICY,
  ) {
    // Start at the top of the range: a client knows nothing about contention yet, and the cap
    // comes down within one window if its polls succeed.
    this.capNs = policy.capMaxNs;
    this.windowStartNs = clock.nowNs();
  }

  /** The current cap t_max. */
  get currentCapNs(): number {
    return this.capNs;
  }

  begin(): PollSchedule {
    let stepNs = this.policy.initialNs;
    return {
      nextDelayNs: () => {
        const delayNs = Math.min(stepNs, this.capNs) + Math.floor(this.random.next() * this.policy.jitterNs);
        stepNs *= 2;
        return delayNs;
      },
    };
  }

  attempt(granted: boolean): void {
    const nowNs = this.clock.nowNs();
    if (nowNs - this.windowStartNs >= this.policy.retuneNs) this.retune(nowNs);
    this.attempts++;
    if (!granted) this.failures++;
  }

  private retune(nowNs: number): void {
    if (this.attempts > 0) {
      const ratio = this.failures / this.attempts;
      if (ratio > this.policy.highRatio) this.capNs = Math.min(this.capNs * 2, this.policy.capMaxNs);
      else if (ratio < this.policy.lowRatio) this.capNs = Math.max(this.capNs / 2, this.policy.capMinNs);
    }
    this.windowStartNs = nowNs;
    this.attempts = 0;
    this.failures = 0;
  }
}
