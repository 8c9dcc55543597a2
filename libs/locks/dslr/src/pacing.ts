/**
 * How a waiter spaces its READ polls of the lock word. DSLR paces by the tickets ahead (dynamic
 * interval polling, §6.1) or polls back to back (A.7); DSLR+ (dslr-backoff) plugs in its own.
 */
export interface PollSchedule {
  /** Sleep before the next READ; `ticketsAhead` is the wait_count of the last observation. */
  nextDelayNs(ticketsAhead: number): number;
}

export interface PollPacing {
  /** A ticket starts waiting for its turn. */
  begin(): PollSchedule;
  /** Every access to a lock word on behalf of an acquire (its FAA, each poll) and whether it showed the grant. */
  attempt(granted: boolean): void;
}

/** wait_count·ω, clamped to [ω, λ/2] (A13): never a busy loop, never blind for half a lease. */
export function dynamicPacing(waitUnitNs: number, leaseNs: number): PollPacing {
  const ceilingNs = leaseNs / 2;
  const schedule: PollSchedule = {
    nextDelayNs: (ticketsAhead) => Math.min(Math.max(ticketsAhead * waitUnitNs, waitUnitNs), ceilingNs),
  };
  return { begin: () => schedule, attempt: () => undefined };
}

/** The paper's busy-polling comparison point: the next READ goes out as soon as the last completes. */
export function busyPacing(): PollPacing {
  const schedule: PollSchedule = { nextDelayNs: () => 0 };
  return { begin: () => schedule, attempt: () => undefined };
}
