import type { ProtocolOptions } from '@lockfabric/locks-common';

/**
 * Protocol options sized for the live fabric, where a verb over gRPC takes ~100 µs instead of the
 * ~2 µs of RDMA hardware the papers' defaults assume: leases long enough that a contended hold
 * does not outlive them, and DSLR's poll unit ω near one live round trip. FissLock's timers are
 * sized for a switch round trip of a few µs; over NATS one takes 1–50 ms on a loaded machine, so
 * with the sim defaults (RTO 200 µs, T_ACQ 10 ms) every attempt times out before its GRANT arrives
 * and is aborted and retried, without end. The RTO stays well above a loaded round trip: NATS loses
 * nothing by itself, and spurious retransmissions feed the duplicate paths (a refused agent
 * transfer can then leave a lock without a holder, see the FissLock README). MCS and ALock wait for a
 * successor's link at most `releaseLinkTimeoutNs` before cutting the queue (a successor that died
 * between its tail swap and its link); 200 ms keeps a slow but live successor from being cut.
 * Flags given with `--opt` win over these.
 */
export const LIVE_PROTOCOL_DEFAULTS: Readonly<Record<string, ProtocolOptions>> = {
  drtm: { leaseMs: 50, driftNs: 1_000_000, txMarginNs: 20_000_000 },
  dslr: { leaseMs: 200, waitUnitNs: 100_000 },
  'dslr-backoff': { leaseMs: 200, waitUnitNs: 100_000 },
  mcs: { releaseLinkTimeoutNs: 200_000_000 },
  alock: { releaseLinkTimeoutNs: 200_000_000 },
  'rma-rw': { releaseLinkTimeoutNs: 200_000_000, pollIntervalNs: 50_000 },
  // T_lease 10 ms assumes RDMA hold times; a loaded live node stalls for tens of ms, and every stall
  // past 3·T_lease resets a lock under a live holder (fenced, but the hold is lost).
  shiftlock: { leaseMs: 100 },
  fisslock: { rtoNs: 250_000_000, attemptTimeoutNs: 2_000_000_000, starvePeriodNs: 20_000_000 },
};

export function liveOptions(protocol: string, given: ProtocolOptions = {}): ProtocolOptions {
  return { ...LIVE_PROTOCOL_DEFAULTS[protocol], ...given };
}

/**
 * The options a run on `substrate` starts from. `embedded` runs every service in one process but
 * on wall-clock timers, and a hop through the event loop of a busy process takes from tens of µs
 * to milliseconds: with the sim-sized FissLock timers (RTO 200 µs, T_ACQ 10 ms) it resends and
 * aborts without end (1 000 acquires did not finish in 80 s here). So it takes the live defaults;
 * only `sim`, whose virtual time matches the papers' hardware, keeps the protocols' own.
 */
export function substrateOptions(substrate: 'sim' | 'embedded' | 'live', protocol: string, given: ProtocolOptions = {}): ProtocolOptions {
  return substrate === 'sim' ? given : liveOptions(protocol, given);
}
