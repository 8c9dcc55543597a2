import type { Clock, ClientPorts } from '@lockfabric/ports';

/**
 * A clock whose timers wake `earlyNs` before they are due, as the live clock's may: its sleeps
 * are setTimeout in whole milliseconds while `nowNs` reads the monotonic clock in ns, so a wait
 * for a deadline can end a fraction of a millisecond short of it (README, "Locks never granted
 * again", cause 1).
 * Virtual time never does this by itself; tests that need the live behaviour wrap a client's clock.
 */
export function earlyWaking(clock: Clock, earlyNs: number): Clock {
  return {
    nowNs: () => clock.nowNs(),
    // Only waits much longer than the error wake early, so a short wait for the rest always ends.
    sleep: (ns, signal) => clock.sleep(ns >= 2 * earlyNs ? ns - earlyNs : ns, signal),
  };
}

/** `ports` with an early-waking clock (the client's deadlines and waits use it). */
export function withEarlyClock(ports: ClientPorts, earlyNs: number): ClientPorts {
  return { ...ports, clock: earlyWaking(ports.clock, earlyNs) };
}
