import type { AcquireDeadline } from '@lockfabric/locks-common';
import type { Clock } from '@lockfabric/ports';

/**
 * Ties a waiting ticket to its caller: sleeps end early at the caller's deadline or abort, and then
 * `onDetach` hands the caller its error while the wait carries on without a deadline.
 */
export class WaitAttachment {
  attached = true;

  constructor(
    private readonly clock: Clock,
    private readonly deadline: AcquireDeadline,
    private readonly signal: AbortSignal | undefined,
    private readonly onDetach: (error: unknown) => void,
  ) {}

  async sleep(ns: number): Promise<void> {
    if (!this.attached) {
      await this.clock.sleep(ns);
      return;
    }
    const waitNs = Math.max(0, Math.min(ns, this.deadline.remainingNs()));
    if (waitNs > 0) {
      try {
        await this.clock.sleep(waitNs, this.signal);
      } catch {
        // aborted: check() below turns it into the caller's error
      }
    }
    try {
      this.deadline.check();
    } catch (error) {
      this.attached = false;
      this.onDetach(error);
      const restNs = ns - waitNs;
      if (restNs > 0) await this.clock.sleep(restNs);
    }
  }
}
