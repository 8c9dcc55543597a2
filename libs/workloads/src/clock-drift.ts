import type { ClientPorts, Clock } from '@lockfabric/ports';

/**
 * Fault: a node's clock runs off true time — `offsetNs` ahead (or behind) and `rate` faster (or
 * slower; 50e-6 is 50 ppm). Protocols that reason with time (leases, timestamps) read this clock;
 * histories keep true time, so the checker judges what really happened.
 */
export interface ClockDrift {
  readonly offsetNs: number;
  readonly rate: number;
}

/** The node's view of `clock`: drifting from now on, at `rate`, shifted by `offsetNs`. */
export function driftingClock(clock: Clock, drift: ClockDrift): Clock {
  return driftFrame(clock, drift).clock;
}

/**
 * A client's ports on a drifting node: its clock, and the absolute deadlines it hands the mailbox
 * (`deadlineNs`, read on its own clock) translated to true time — else a protocol that waits for a
 * deadline on a slow clock would be woken before its clock reaches it, for ever.
 */
export function driftingPorts(ports: ClientPorts, drift: ClockDrift): ClientPorts {
  if (drift.offsetNs === 0 && drift.rate === 0) return ports;
  const frame = driftFrame(ports.clock, drift);
  const box = ports.mailbox;
  return {
    ...ports,
    clock: frame.clock,
    mailbox: {
      self: box.self,
      send: (message) => box.send(message),
      receive: (match, options) => box.receive(match, options?.deadlineNs === undefined ? options : { ...options, deadlineNs: frame.toTrueNs(options.deadlineNs) }),
    },
  };
}

function driftFrame(clock: Clock, drift: ClockDrift): { clock: Clock; toTrueNs(localNs: number): number } {
  if (drift.offsetNs === 0 && drift.rate === 0) return { clock, toTrueNs: (ns) => ns };
  const originNs = clock.nowNs();
  const speed = 1 + drift.rate;
  const toTrueNs = (localNs: number): number => Math.ceil(originNs + (localNs - drift.offsetNs - originNs) / speed);
  return { toTrueNs, clock: {
    nowNs: () => originNs + (clock.nowNs() - originNs) * speed + drift.offsetNs,
    // A sleep of `ns` on this clock lasts ns / speed of true time, rounded up to whole nanoseconds:
    // a fractional remainder would advance true time by less than float precision at large times,
    // and a protocol waiting for a deadline on this clock would then never see it pass.
    sleep: (ns, signal) => clock.sleep(ns > 0 ? Math.ceil(ns / speed) : ns, signal),
  } };
}
