import { InMemoryCluster, DEFAULT_SIM_NETWORK } from './cluster.js';
import type { InMemoryClusterConfig } from './cluster.js';
import { SeededRandom } from './random.js';
import { RealClock } from '@lockfabric/realtime';
import { RealTimeScheduler, VirtualScheduler } from './scheduler.js';

export type InMemorySubstrate = 'sim' | 'embedded';

export interface InMemoryClusterSpec extends Partial<Omit<InMemoryClusterConfig, 'scheduler' | 'random'>> {
  readonly seed: number;
  readonly lockCount: number;
  readonly entryBytes: number;
}

/** A `sim` cluster: virtual time, every choice drawn from `seed`. */
export function createSimCluster(spec: InMemoryClusterSpec): { cluster: InMemoryCluster; scheduler: VirtualScheduler } {
  const scheduler = new VirtualScheduler();
  const cluster = new InMemoryCluster({ ...defaults(spec), scheduler, random: new SeededRandom(spec.seed) });
  return { cluster, scheduler };
}

/** An `embedded` cluster: real time, in-memory transport, one process. */
export function createEmbeddedCluster(spec: InMemoryClusterSpec): { cluster: InMemoryCluster; scheduler: RealTimeScheduler } {
  const scheduler = new RealTimeScheduler(new RealClock());
  const cluster = new InMemoryCluster({ ...defaults(spec), scheduler, random: new SeededRandom(spec.seed) });
  return { cluster, scheduler };
}

function defaults(spec: InMemoryClusterSpec): Omit<InMemoryClusterConfig, 'scheduler' | 'random'> {
  return {
    memoryNodes: 1,
    computeNodes: 2,
    ...DEFAULT_SIM_NETWORK,
    ...spec,
  };
}
