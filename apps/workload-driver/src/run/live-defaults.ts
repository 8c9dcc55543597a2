import { availableProtocols, protocolById } from '@lockfabric/lock-catalog';
import type { ProtocolOptions } from '@lockfabric/locks-common';

/**
 * Protocol options sized for the live fabric, where a verb over gRPC takes ~100 µs instead of the
 * ~2 µs of RDMA hardware the papers' defaults assume. Each protocol keeps its own with its code
 * (`ProtocolDefinition.liveDefaults`, with the reason beside it); flags given with `--opt` win.
 */
export const LIVE_PROTOCOL_DEFAULTS: Readonly<Record<string, ProtocolOptions>> = Object.fromEntries(availableProtocols().flatMap((p) => (p.liveDefaults ? [[p.id, p.liveDefaults]] : [])));

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

/**
 * Options a live run cannot apply: the protocol's memory-node service reads them, and on live it
 * starts once with its memory node, on its defaults (`ProtocolDefinition.memoryServiceOptions`).
 */
export function liveOptionProblems(protocol: string, given: ProtocolOptions = {}): string[] {
  const fixed = protocolById(protocol).memoryServiceOptions ?? [];
  return Object.keys(given)
    .filter((key) => fixed.includes(key))
    .map((key) => `--opt ${key}: ${protocol}'s memory-node service reads it, and on live that service starts once with the memory node, on its defaults; set it on --substrate sim or embedded`);
}

/**
 * Operations a live bench runs, untimed, before the run it reports. A service process that has
 * not yet run a protocol executes that path in V8's interpreter and baseline code: on a fresh
 * local cluster the first 500 of 5 000 uncontended ShiftLock acquires had a p50 of 596 µs, the
 * last 4 000 about 60 µs. Without a warm-up the main table showed that start-up cost as the
 * protocol's latency (2× the floor probe's, which ran after it on warm processes).
 */
export const DEFAULT_LIVE_WARMUP_OPS = 2_000;
