import type { Nic, NodeMemory } from '@lockfabric/fabric';
import { FenceTable, refuseFenced } from '@lockfabric/live';
import type { MemoryDescription, MemoryExecutor } from '@lockfabric/live';
import type { Completion, NodeId, WorkRequest } from '@lockfabric/ports';

/**
 * What this compute node's memory server runs: its NIC over the descriptor slots (MCS/ALock queue
 * nodes) of its own clients, which peers WRITE grants and links into. A compute node declared dead
 * that was only paused must not reach them when it resumes (its stale grant could land in a
 * survivor's reused queue node), so its doorbells are refused exactly as a memory node refuses
 * them: `bad-rkey`, "fenced: …" (FenceTable of @lockfabric/live, fed by `followFences`). The table
 * never fences this node itself; its own verbs take the NIC's loopback and never come through here.
 */
export class DescriptorMemoryExecutor implements MemoryExecutor {
  readonly fences: FenceTable;
  private fencedRequests = 0;

  constructor(
    private readonly node: NodeId,
    private readonly memory: NodeMemory,
    private readonly nic: Nic,
  ) {
    this.fences = new FenceTable({ self: node });
  }

  executeBatch(batch: readonly WorkRequest[], initiator: NodeId): Completion[] {
    const refused = refuseFenced(this.fences, batch, initiator);
    if (refused) {
      this.fencedRequests += batch.length;
      return refused;
    }
    return this.nic.executeBatch(batch, initiator);
  }

  /** Work requests refused because their initiator was fenced. */
  get fencedCount(): number {
    return this.fencedRequests;
  }

  describe(): MemoryDescription {
    return { node: this.node, regions: this.memory.regions().map((r) => ({ region: r.region, rkey: r.rkey, sizeBytes: r.sizeBytes, name: 'descriptors' })) };
  }
}
