/** The resend interval doubles per attempt up to this multiple of the first, so a partition of seconds is outlasted. */
export const BACKOFF_CAP = 64;

/** How a NetLock client resends what the switch has not answered (a RELEASE, a cancel poll). */
export interface ResendConfig {
  /** First resend after this long without an answer. */
  readonly retransmitNs: number;
  /** Sends before the packet is given up (the purge or the next run's install clears its entry then). */
  readonly maxAttempts: number;
}

/** The wait after `waitNs`: doubled, at most BACKOFF_CAP times the first. */
export function nextResendNs(config: ResendConfig, waitNs: number): number {
  return Math.min(waitNs * 2, config.retransmitNs * BACKOFF_CAP);
}
