import { MemoryQueuePair } from '@lockfabric/live';
import type { Logger, MemoryDescription } from '@lockfabric/live';
import type { Completion, NodeId, PostOptions, TableBinding, WorkRequest } from '@lockfabric/ports';
import { FabricAccessError, errorMessage } from '@lockfabric/ports';

/** A memory node that broke its stream is described again after 50 ms, doubling up to 1 s: no hot loop while it is down. */
export const MEMORY_REBIND = { initialMs: 50, maxMs: 1_000 } as const;

/**
 * Serves verbs that target this node itself (RDMA loopback): a compute node's own NIC, or, on a
 * memory node hosting clients, its executor (so fences and the IOPS cap apply to them too).
 */
export interface LoopbackExecutor {
  executeBatch(batch: readonly WorkRequest[], initiator: NodeId): Completion[] | Promise<Completion[]>;
}

/**
 * A post that calls `settled` once when the batch's completions are known, just before its promise
 * resolves (at once for a batch answered without the network). Whoever only counts batches in
 * flight (VerbGate) then needs no promise reaction of its own per verb.
 */
export type SettlingPost = (batch: readonly WorkRequest[], options?: PostOptions, settled?: () => void) => Promise<Completion[]>;

/** One client's binding: its post function, pinned to the memory-node incarnations it follows. */
export interface FabricView extends TableBinding {
  readonly post: SettlingPost;
}

/**
 * This compute node's view of the fabric: one queue pair (gRPC stream) per remote node that serves
 * memory, plus its own NIC for verbs that target itself (RDMA loopback). Batches that span nodes
 * are split per node and their completions put back in order.
 */
export class LiveFabric {
  private readonly queuePairs = new Map<NodeId, MemoryQueuePair>();
  private readonly connecting = new Map<NodeId, Promise<MemoryQueuePair>>();
  private readonly endpoints = new Map<NodeId, string>();
  private readonly memoryNodes = new Set<NodeId>();

  constructor(
    readonly node: NodeId,
    private readonly localNic: LoopbackExecutor,
    private readonly logger: Logger,
  ) {}

  /** Connects to a memory node by address and learns its node id and regions. */
  async addMemoryNode(address: string): Promise<MemoryDescription> {
    const qp = await MemoryQueuePair.connect(address, this.node, { logger: this.logger, rebind: MEMORY_REBIND });
    const description = await qp.describe();
    this.queuePairs.set(description.node, qp);
    this.endpoints.set(description.node, address);
    this.memoryNodes.add(description.node);
    return description;
  }

  /**
   * Binds every memory node's queue pair to the node's current incarnation. Called when a run
   * starts, after the driver re-initialised the tables: a memory node that restarted since is used
   * again, while one that restarts during the run breaks its queue pair (typed `unreachable`
   * completions) instead of letting the run's verbs reach a fresh, empty table.
   */
  async rebindMemoryNodes(): Promise<void> {
    await Promise.all([...this.memoryNodes].map((node) => this.queuePairs.get(node)?.describe()));
  }

  /** Rebind counters summed over the memory nodes' queue pairs. */
  rebindStats(): { downs: number; attempts: number; failures: number; incarnationChanges: number } {
    const out = { downs: 0, attempts: 0, failures: 0, incarnationChanges: 0 };
    for (const node of this.memoryNodes) {
      const stats = this.queuePairs.get(node)?.stats();
      if (!stats) continue;
      out.downs += stats.downs;
      out.attempts += stats.rebindAttempts;
      out.failures += stats.rebindFailures;
      out.incarnationChanges += stats.incarnationChanges;
    }
    return out;
  }

  /**
   * A client's view of the fabric. Its posts carry the incarnations it follows, so a verb meant
   * for a lost table (a hold granted before the memory node restarted) is refused, never applied
   * to the new one. It follows the current incarnations only when told to (its client holds nothing).
   */
  view(): FabricView {
    let pins: ReadonlyMap<NodeId, number> = new Map();
    // Most posts carry no options of their own: they share one options object per `follow`.
    let pinned: PostOptions | undefined;
    const current = () => {
      const out = new Map<NodeId, number>();
      for (const node of this.memoryNodes) {
        const incarnation = this.queuePairs.get(node)?.boundIncarnation;
        if (incarnation !== undefined) out.set(node, incarnation);
      }
      return out;
    };
    // Loops, not spreads: `lost` runs on every acquire and `follow` before it, and the pins
    // rarely change, so neither allocates unless a memory node's incarnation did.
    const lost = () => {
      for (const node of pins.keys()) if (this.queuePairs.get(node)?.boundIncarnation !== pins.get(node)) return true;
      return false;
    };
    const unchanged = () => {
      let bound = 0;
      for (const node of this.memoryNodes) {
        const incarnation = this.queuePairs.get(node)?.boundIncarnation;
        if (incarnation === undefined) continue;
        if (pins.get(node) !== incarnation) return false;
        bound++;
      }
      return bound === pins.size;
    };
    return {
      post: (batch, options, settled) => this.post(batch, pins.size === 0 ? options : options === undefined ? pinned : { ...options, incarnations: pins }, settled),
      follow: () => {
        if (unchanged()) return;
        pins = current();
        pinned = pins.size > 0 ? { incarnations: pins } : undefined;
      },
      lost,
      incarnations: () => pins,
      settle: async (maxWaitMs) => {
        await Promise.all([...pins.keys()].map((node) => this.queuePairs.get(node)?.whenUp(maxWaitMs)));
        return lost();
      },
    };
  }

  /** Where a peer's memory is served (compute nodes serve their descriptor slots). */
  setEndpoint(node: NodeId, address: string): void {
    if (node === this.node || this.endpoints.get(node) === address) return;
    this.endpoints.set(node, address);
    const old = this.queuePairs.get(node);
    this.queuePairs.delete(node);
    old?.close();
  }

  /**
   * Posts a batch. A batch for one node already connected goes straight to its queue pair and the
   * caller gets the queue pair's own promise: no async wrapper adds microtask hops to every verb.
   */
  post(batch: readonly WorkRequest[], options?: PostOptions, settled?: () => void): Promise<Completion[]> {
    const first = batch[0];
    if (!first) {
      settled?.();
      return Promise.resolve([]);
    }
    const node = first.addr.node;
    for (let i = 1; i < batch.length; i++) if ((batch[i] as WorkRequest).addr.node !== node) return this.postSplit(batch, options, settled);
    return this.postTo(node, batch, options, settled);
  }

  /** Splits a batch per target node, keeping each node's requests in their original order. */
  private async postSplit(batch: readonly WorkRequest[], options?: PostOptions, settled?: () => void): Promise<Completion[]> {
    const groups = new Map<NodeId, number[]>();
    batch.forEach((wr, i) => groups.set(wr.addr.node, [...(groups.get(wr.addr.node) ?? []), i]));
    const out: Completion[] = new Array<Completion>(batch.length);
    try {
      await Promise.all(
        [...groups].map(async ([node, indexes]) => {
          const completions = await this.postTo(node, indexes.map((i) => batch[i]!), options);
          indexes.forEach((i, k) => (out[i] = completions[k]!));
        }),
      );
    } finally {
      settled?.();
    }
    return out;
  }

  close(): void {
    for (const qp of this.queuePairs.values()) qp.close();
    this.queuePairs.clear();
  }

  private postTo(node: NodeId, batch: readonly WorkRequest[], options?: PostOptions, settled?: () => void): Promise<Completion[]> {
    if (node === this.node) {
      let completions: Completion[] | Promise<Completion[]>;
      try {
        completions = this.localNic.executeBatch(batch, this.node);
      } catch (error) {
        settled?.();
        return Promise.reject(error instanceof Error ? error : new FabricAccessError('bad-request', `posting the batch threw ${String(error)}`));
      }
      if (Array.isArray(completions)) {
        settled?.();
        return Promise.resolve(completions);
      }
      return settled ? completions.finally(settled) : completions;
    }
    const qp = this.queuePairs.get(node);
    if (qp) return this.postOn(qp, node, batch, options, settled);
    return this.queuePair(node).then(
      (connected) => {
        if (connected) return this.postOn(connected, node, batch, options, settled);
        settled?.();
        return batch.map(() => ({ status: 'unknown-node' as const, detail: `node ${node} is not known to compute node ${this.node}` }));
      },
      (error: unknown) => {
        settled?.();
        throw error;
      },
    );
  }

  private postOn(qp: MemoryQueuePair, node: NodeId, batch: readonly WorkRequest[], options?: PostOptions, settled?: () => void): Promise<Completion[]> {
    // Checked in the same turn as qp.post: a rebind in between fails the queued requests itself.
    const pinned = options?.incarnations?.get(node);
    if (pinned !== undefined && qp.boundIncarnation !== pinned) {
      settled?.();
      const detail = `table lost: memory node ${node} restarted (incarnation ${pinned} is gone, it serves ${String(qp.boundIncarnation)})`;
      return Promise.resolve(batch.map(() => ({ status: 'unreachable' as const, detail })));
    }
    return qp.post(batch, options, settled);
  }

  private async queuePair(node: NodeId): Promise<MemoryQueuePair | undefined> {
    const existing = this.queuePairs.get(node);
    if (existing) return existing;
    const address = this.endpoints.get(node);
    if (!address) return undefined;
    let pending = this.connecting.get(node);
    if (!pending) {
      pending = MemoryQueuePair.connect(address, this.node, { logger: this.logger }).finally(() => this.connecting.delete(node));
      this.connecting.set(node, pending);
    }
    try {
      const qp = await pending;
      this.queuePairs.set(node, qp);
      return qp;
    } catch (error) {
      this.logger.warn(`cannot reach node ${node} at ${address}: ${errorMessage(error)}`);
      return undefined;
    }
  }
}
