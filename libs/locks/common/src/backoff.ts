import type { Random } from '@lockfabric/ports';

export interface BackoffPolicy {
  readonly initialNs: number;
  readonly maxNs: number;
  readonly factor: number;
}

/** Truncated exponential backoff with full jitter: the wait is uniform in [0, current bound). */
export class TruncatedBackoff {
  private boundNs: number;

  constructor(
    private readonly random: Random,
    private readonly policy: BackoffPolicy,
  ) {
    this.boundNs = policy.initialNs;
  }

  nextDelayNs(): number {
    const delay = Math.floor(this.random.next() * this.boundNs);
    this.boundNs = Math.min(this.policy.maxNs, this.boundNs * this.policy.factor);
    return delay;
  }

  reset(): void {
    this.boundNs = this.policy.initialNs;
  }
}
