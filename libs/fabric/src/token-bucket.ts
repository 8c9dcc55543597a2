export interface TokenBucketOptions {
  /** Tokens added per second. */
  readonly ratePerSec: number;
  /** Bucket capacity: the largest burst allowed after idling. */
  readonly burst: number;
  /** Time of creation on the caller's clock; the bucket starts full. */
  readonly startNs?: number;
}

/**
 * Rate limiter for the live memory node's optional IOPS cap. Pure: the caller passes its clock's
 * `nowNs`, so the same bucket works in virtual and real time and tests need no timers.
 */
export class TokenBucket {
  readonly #ratePerNs: number;
  readonly #burst: number;
  #tokens: number;
  #lastNs: number;

  constructor(options: TokenBucketOptions) {
    if (!Number.isFinite(options.ratePerSec) || options.ratePerSec <= 0) {
      throw new RangeError(`token bucket rate must be a positive number per second, got ${options.ratePerSec}`);
    }
    if (!Number.isFinite(options.burst) || options.burst < 1) {
      throw new RangeError(`token bucket burst must be at least 1, got ${options.burst}`);
    }
    this.#ratePerNs = options.ratePerSec / 1e9;
    this.#burst = options.burst;
    this.#tokens = options.burst;
    this.#lastNs = options.startNs ?? 0;
  }

  /** Tokens available at `nowNs` (negative while reservations are outstanding). */
  available(nowNs: number): number {
    this.#refill(nowNs);
    return this.#tokens;
  }

  /** Takes `count` tokens if they are all there now; otherwise takes nothing. */
  tryTake(nowNs: number, count = 1): boolean {
    this.#refill(nowNs);
    if (this.#tokens < count) return false;
    this.#tokens -= count;
    return true;
  }

  /**
   * Always takes `count` tokens, going into debt if needed, and returns how many nanoseconds the
   * caller must wait before proceeding (0 when the tokens were there). Callers queue behind each other.
   */
  reserve(nowNs: number, count = 1): number {
    this.#refill(nowNs);
    this.#tokens -= count;
    return this.#tokens >= 0 ? 0 : Math.ceil(-this.#tokens / this.#ratePerNs);
  }

  #refill(nowNs: number): void {
    // A clock read that goes backwards adds nothing rather than removing tokens.
    if (nowNs > this.#lastNs) {
      this.#tokens = Math.min(this.#burst, this.#tokens + (nowNs - this.#lastNs) * this.#ratePerNs);
      this.#lastNs = nowNs;
    }
  }
}
