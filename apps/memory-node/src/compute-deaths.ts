import type { Logger } from '@lockfabric/live';
import type { NodeServiceContext } from '@lockfabric/locks-common';
import type { NodeId } from '@lockfabric/ports';
import { errorMessage } from '@lockfabric/ports';

type ComputeFailures = NonNullable<NodeServiceContext['failures']>;

/**
 * The memory node's protocol services' view of compute-node deaths (their `failures`): each fence
 * the recovery watch applies, passed on before the node reports the recovery. It has no feed of its
 * own: the fence of the memory node's verbs and the lock managers on its CPU act on the same input.
 */
export class ComputeDeaths implements ComputeFailures {
  private readonly listeners = new Set<(node: NodeId) => void>();

  constructor(
    private readonly self: NodeId,
    private readonly logger: Logger,
  ) {}

  onComputeNodeFailed(listener: (node: NodeId) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every service that `node` was fenced; one that throws does not keep the others from hearing. */
  fenced(node: NodeId): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(node);
      } catch (error) {
        this.logger.warn(`memory node ${this.self}: a protocol service failed on the death of compute node ${node}: ${errorMessage(error)}`);
      }
    }
  }
}
