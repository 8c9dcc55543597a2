import type { AcquireDeadline } from '@lockfabric/locks-common';
import type { Clock } from '@lockfabric/ports';

/**
 * The caller's deadline and abort signal for an acquire that cannot simply stop once it has touched
 * the lock: a writer is linked into the MCS queue and a reader is counted in RdrCnt, and neither can
 * withdraw without breaking the protocol (a predecessor would hand over to no one; a writer would
 * wait for a reader that never releases). So when the deadline passes or the signal aborts, the
 * caller gets its typed error at once (`onAbandon`) and the attempt carries on unattended: it waits
 * for its turn and releases immediately, passing the lock on with no critical section.
 */
export class Patience {
  private abandonedWith: unknown;
  private isAbandoned = false;

  constructor(
    private readonly clock: Clock,
    private readonly deadline: AcquireDeadline,
    private readonly signal: AbortSignal | undefined,
    private readonly onAbandon: (error: unknown) => void,
  ) {}

  get abandoned(): boolean {
    return this.isAbandoned;
  }

  get error(): unknown {
    return this.abandonedWith;
  }

  /** Gives the caller its error the first time the deadline or the signal fires; never throws. */
  check(): void {
    if (this.isAbandoned) return;
    try {
      this.deadline.check();
    } catch (error) {
      this.isAbandoned = true;
      this.abandonedWith = error;
      this.onAbandon(error);
    }
  }

  /** When a wait meant to end at `wakeNs` must end: earlier if the caller's deadline comes first. */
  wakeBy(wakeNs: number): number {
    return this.isAbandoned ? wakeNs : Math.min(wakeNs, this.deadline.atNs);
  }

  /** The caller's signal while the caller still waits; none once the attempt is unattended. */
  get waitSignal(): AbortSignal | undefined {
    return this.isAbandoned ? undefined : this.signal;
  }

  /** Sleeps `ns` (cut short by the deadline or signal), then checks. */
  async sleep(ns: number): Promise<void> {
    if (ns > 0) {
      const nowNs = this.clock.nowNs();
      const waitNs = Math.max(0, this.wakeBy(nowNs + ns) - nowNs);
      try {
        await this.clock.sleep(waitNs, this.waitSignal);
      } catch {
        // aborted: check() below turns it into the caller's error
      }
    }
    this.check();
  }
}
