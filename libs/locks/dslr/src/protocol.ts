import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { ClientPorts, Random } from '@lockfabric/ports';
import { DslrClient } from './dslr-client.js';
import { DSLR_OPTION_HELP, readDslrOptions } from './options.js';
import type { DslrOptions } from './options.js';
import { busyPacing, dynamicPacing } from './pacing.js';

/** A DSLR client with the polling the options ask for (dynamic interval polling by default). */
export function createDslrClient(ports: ClientPorts, options: DslrOptions): DslrClient {
  const pacing = options.polling === 'busy' ? busyPacing() : dynamicPacing(options.waitUnitNs, options.leaseNs);
  return new DslrClient(ports, options, pacing, 'dslr');
}

/**
 * Options the swarm draws for the DSLR family: λ short enough that a dead holder is skipped within
 * a small run, sometimes a small counter limit (frequent resets, DSLR §4.7) and restart-on-abort.
 */
export function dslrSwarmOptions(random: Random): ProtocolOptions {
  const leaseNs = [200_000, 500_000, 1_000_000][random.int(3)]!;
  // Limits of 8 and 16 reset a word every few acquires, so resets meet kills, crashes and pauses
  // often (left out while a bouncer's backoff could outgrow the frozen-word watchdog's 2λ,
  // docs/decisions/0005).
  const counterLimit = random.next() < 0.4 ? [8, 16, 32, 48, 64][random.int(5)]! : undefined;
  const restartOnAbort = random.next() < 0.3;
  return { leaseNs, ...(counterLimit ? { counterLimit } : {}), ...(restartOnAbort ? { restartOnAbort } : {}) };
}

/**
 * Multi-slot tickets (DSLR §6.1's k·λ leases) for a swarm profile that wants them: three seeds in
 * ten take 2 or 3 slots per ticket (at most 4). Drawn after the family's options, so adding it to
 * a profile leaves those draws as they were.
 */
export function dslrMultiSlotOptions(random: Random): ProtocolOptions {
  const slots = random.next() < 0.3 ? 2 + random.int(2) : 1;
  return slots > 1 ? { maxSlots: 4, slots } : {};
}

export const dslr: ProtocolDefinition = {
  id: 'dslr',
  // Waiters skip tickets whose counters stalled for 2λ, polling at most every λ/2 (λ = 10 ms).
  recovery: { compute: { mechanism: 'lease', boundMs: 25, action: 'waiters skip stalled tickets after 2λ; late release fenced by LeaseExpiredError' } },
  // Live: leases that outlast a contended hold over gRPC, and the poll unit ω near one live round trip.
  liveDefaults: { leaseNs: 200_000_000, waitUnitNs: 100_000 },
  // Leases short enough that dead holders are skipped within a small run (DSLR §4.6).
  swarm: { crashes: true, nodeKill: true, memoryRestart: true, partitions: true, flushedVerbs: true, pauses: 'beyond-lease', options: dslrSwarmOptions },
  summary: 'DSLR (SIGMOD 2018): RDMA bakery lock, four 16-bit counters in one word; FAA to acquire and release, READ polls, leases, counter resets',
  fabric: 'verbs',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: DSLR_OPTION_HELP,
  lockResets: true,
  createClient: (ports, options) => createDslrClient(ports, readDslrOptions(options)),
};
