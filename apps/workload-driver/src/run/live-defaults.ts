import type { ProtocolOptions } from '@lockfabric/locks-common';

/**
 * Protocol options sized for the live fabric, where a verb over gRPC takes ~100 µs instead of the
 * ~2 µs of RDMA hardware the papers' defaults assume: leases long enough that a contended hold
 * does not outlive them, and DSLR's poll unit ω near one live round trip. Flags given with `--opt`
 * win over these.
 */
export const LIVE_PROTOCOL_DEFAULTS: Readonly<Record<string, ProtocolOptions>> = {
  drtm: { leaseNs: 50_000_000, driftNs: 1_000_000, txMarginNs: 20_000_000 },
  dslr: { leaseMs: 200, waitUnitNs: 100_000 },
  'dslr-backoff': { leaseMs: 200, waitUnitNs: 100_000 },
};

export function liveOptions(protocol: string, given: ProtocolOptions = {}): ProtocolOptions {
  return { ...LIVE_PROTOCOL_DEFAULTS[protocol], ...given };
}
