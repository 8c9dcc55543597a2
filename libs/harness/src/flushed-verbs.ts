import type { NodeId } from '@lockfabric/ports';
import { SeededRandom } from '@lockfabric/sim';
import type { InMemoryCluster, Scheduler } from '@lockfabric/sim';
import type { PartitionSpec } from './partition.js';

/**
 * Fault of an in-memory run (sim): lost completions. At each instant, every queue pair of compute
 * node `node` breaks and its verbs in flight complete `unreachable`; a coin seeded by `seed`
 * decides for each verb whether the memory node ran it first (applied, then the completion lost)
 * or never (see InMemoryCluster.flushQueuePairs). With `onCuts`, each partition's start breaks the
 * cut node's queue pairs too, as the keep-alive of a live stream does during a cut.
 */
export interface FlushedVerbsSpec {
  readonly instants: readonly { readonly node: number; readonly atNs: number }[];
  readonly onCuts: boolean;
  readonly seed: number;
}

/** What the fault did in one run. */
export interface FlushedVerbsOutcome {
  readonly breaks: number;
  readonly flushed: number;
  readonly ran: number;
}

/**
 * Schedules the breaks of `spec` from `startNs`; breaks due once `over()` holds (the heal probe
 * has begun: faults are off by then) do nothing. The outcome object fills in as breaks happen.
 */
export function scheduleFlushedVerbs(spec: FlushedVerbsSpec, partitions: readonly PartitionSpec[], cluster: InMemoryCluster, scheduler: Scheduler, startNs: number, over: () => boolean): FlushedVerbsOutcome {
  const coin = new SeededRandom(spec.seed);
  const outcome = { breaks: 0, flushed: 0, ran: 0 };
  const breaks: { node: NodeId; atNs: number }[] = [...spec.instants, ...(spec.onCuts ? partitions.map((p) => ({ node: p.node, atNs: p.atNs })) : [])];
  for (const { node, atNs } of breaks) {
    scheduler.at(startNs + atNs, () => {
      if (over()) return;
      const { flushed, ran } = cluster.flushQueuePairs(node, () => coin.next() < 0.5);
      outcome.breaks++;
      outcome.flushed += flushed;
      outcome.ran += ran;
    });
  }
  return outcome;
}
