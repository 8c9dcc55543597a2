// Swarm cases of the lease-based DSLR family, shared by libs/locks/dslr and dslr-backoff tests.
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { SeededRandom } from '@lockfabric/sim';
import type { WorkloadSpec } from '@lockfabric/workloads';

/** One seed's run: the workload, the protocol options and the faults, all drawn from the seed. */
export interface SwarmCase {
  readonly spec: WorkloadSpec;
  readonly options: ProtocolOptions;
  readonly crashProbability: number;
  /** Counters stay below the limit and nobody crashes: FCFS is checked and no CAS may be issued. */
  readonly faultFree: boolean;
  readonly smallLimit: boolean;
}

/** What a protocol of the family can take: DSLR+ always paces with its backoff, so it never polls busily. */
export interface SwarmDraw {
  /** Default true. */
  readonly busyPolling?: boolean;
}

/**
 * Swarm testing (STYLE §3): each seed picks its own mix — 4–12 clients, 1–8 locks, 100–300
 * acquires, read ratio, skew, crashes, small counter limits (frequent resets), multi-slot tickets,
 * busy polling, timeouts — so 500 seeds cover many fault mixes with small runs.
 */
export function swarmCase(seed: number, base: ProtocolOptions = {}, draw: SwarmDraw = {}): SwarmCase {
  const r = new SeededRandom(seed * 7919 + 17);
  const pick = <T>(items: readonly T[]): T => items[r.int(items.length)]!;
  const crashes = r.next() < 0.35;
  const smallLimit = r.next() < 0.35;
  const slots = r.next() < 0.2 ? 1 + r.int(3) : 1;
  const options: Record<string, string | number | boolean> = { leaseMs: 0.2, backoffCapNs: 200_000, ...base };
  if (smallLimit) options['counterLimit'] = pick([8, 16, 32, 64]);
  if (slots > 1) {
    options['maxSlots'] = 4;
    options['slots'] = slots;
  }
  // Drawn even when busy polling is off, so a seed draws the same mix for every protocol.
  if (r.next() < 0.15 && base['polling'] === undefined && draw.busyPolling !== false) options['polling'] = 'busy';
  if (r.next() < 0.2) options['restartOnAbort'] = true;
  const timeouts = r.next() < 0.3;
  const spec: WorkloadSpec = {
    clients: 4 + r.int(9),
    locks: 1 + r.int(8),
    readRatio: pick([0, 0.3, 0.5, 0.5, 0.9]),
    distribution: r.next() < 0.5 ? 'uniform' : { zipf: 0.99 },
    operations: 100 + r.int(201),
    thinkNs: r.int(3_000),
    criticalSectionNs: 500 + r.int(5_000),
    seed,
    timeoutMs: timeouts ? pick([0.02, 0.1, 1]) : 50,
  };
  return { spec, options, crashProbability: crashes ? 0.005 + r.next() * 0.025 : 0, faultFree: !crashes && !smallLimit, smallLimit };
}

/**
 * A harsher mix for hunting mutants: one hot lock, 6–12 clients, short leases, a counter limit of 8
 * (a reset every few acquires) and crashes, so skips, forced resets and withdrawals collide often.
 */
export function hotSwarmCase(seed: number, base: ProtocolOptions = {}): SwarmCase {
  const r = new SeededRandom(seed);
  const spec: WorkloadSpec = {
    clients: 6 + r.int(7),
    locks: 1,
    readRatio: [0.2, 0.5, 0.8][r.int(3)]!,
    distribution: 'uniform',
    operations: 150,
    thinkNs: r.int(2_000),
    criticalSectionNs: 1_000 + r.int(8_000),
    seed,
    timeoutMs: 50,
  };
  return { spec, options: { leaseMs: 0.05, counterLimit: 8, backoffCapNs: 50_000, ...base }, crashProbability: 0.03, faultFree: false, smallLimit: true };
}
