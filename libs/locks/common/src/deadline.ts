import { LockAbortedError, LockTimeoutError } from '@lockfabric/ports';
import type { AcquireOptions, Clock, LockId, LockMode } from '@lockfabric/ports';
import { NS_PER_MS } from '@lockfabric/ports';

/** The point after which an acquire gives up, and the checks every retry loop makes against it. */
export class AcquireDeadline {
  readonly atNs: number;

  constructor(
    private readonly clock: Clock,
    private readonly lock: LockId,
    private readonly mode: LockMode,
    private readonly options: AcquireOptions = {},
  ) {
    const timeoutMs = options.timeoutMs;
    this.atNs = timeoutMs === undefined ? Infinity : clock.nowNs() + timeoutMs * NS_PER_MS;
  }

  /** Throws LockAbortedError or LockTimeoutError when the acquire must stop. */
  check(): void {
    if (this.options.signal?.aborted) throw new LockAbortedError(this.lock, abortReason(this.options.signal));
    if (this.clock.nowNs() >= this.atNs) throw new LockTimeoutError(this.lock, this.mode, this.options.timeoutMs ?? 0);
  }

  remainingNs(): number {
    return this.atNs - this.clock.nowNs();
  }

  /** Sleeps at most until the deadline, then checks it. */
  async pause(ns: number): Promise<void> {
    const wait = Math.max(0, Math.min(ns, this.remainingNs()));
    if (wait > 0) {
      try {
        await this.clock.sleep(wait, this.options.signal);
      } catch {
        // aborted: reported by check() below with the caller's reason
      }
    }
    this.check();
  }
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : 'aborted by caller';
}
