import type { NodeId } from '@lockfabric/ports';
import { SeededRandom } from '@lockfabric/sim';
import type { InMemoryCluster, Scheduler } from '@lockfabric/sim';
import type { PartitionSpec } from './partition.js';

/**
 * Fault of an in-memory run (sim): lost completions. At each break, the connection of compute node
 * `node`'s queue pairs goes silent for `silentNs` (a keep-alive timing out), then breaks: every
 * verb in flight at the start or posted meanwhile completes `unreachable`, and a coin seeded by
 * `seed` decides for each verb whether the memory node ran it first (applied, then the completion
 * lost) or never (see InMemoryCluster.breakQueuePairs). With `onCuts`, each partition's start
 * breaks the cut node's queue pairs too (at once: the cut holds back what is posted during it).
 */
export interface FlushedVerbsSpec {
  readonly instants: readonly { readonly node: number; readonly atNs: number; readonly silentNs: number }[];
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
  const breaks: { node: NodeId; atNs: number; silentNs: number }[] = [...spec.instants, ...(spec.onCuts ? partitions.map((p) => ({ node: p.node, atNs: p.atNs, silentNs: 0 })) : [])];
  for (const { node, atNs, silentNs } of breaks) {
    scheduler.at(startNs + atNs, () => {
      if (over()) return;
      cluster.breakQueuePairs(node, silentNs, () => coin.next() < 0.5, ({ flushed, ran }) => {
        outcome.breaks++;
        outcome.flushed += flushed;
        outcome.ran += ran;
      });
    });
  }
  return outcome;
}
