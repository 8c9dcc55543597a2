import type { Completion, NodeId, WorkRequest } from '@lockfabric/ports';

/** A compute node the coordinator declared dead, as a node serving memory fences it. */
export interface Fence {
  readonly node: NodeId;
  /** The incarnation declared dead: a later one is admitted again. */
  readonly incarnation: bigint;
  /** Epoch of the view (or failure notice) that declared it dead. */
  readonly epoch: bigint;
}

/** A member as a membership view lists it (only what fencing needs). */
export interface ViewMember {
  readonly role: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
  readonly state: 'alive' | 'suspect' | 'dead';
}

export interface FenceTableOptions {
  /** The node that owns the table: never fenced (a compute node serving memory does not fence itself). */
  readonly self?: NodeId;
}

/**
 * Which compute nodes a node serving memory refuses verbs from: the software form of moving a dead
 * node's queue pairs to the error state (revoking its rkeys). Memory nodes keep one for their lock
 * tables, compute nodes one for the descriptor slots (queue nodes) their peers write into. Pure
 * state, fed by membership views and failure notices (fence-feed.ts); the executor asks
 * `refuseFenced` before it runs a doorbell.
 *
 * Rules: a compute node is fenced from the first view or notice that declares its incarnation
 * dead, or from the first view that no longer lists it; input with an epoch older than the newest one applied is ignored; only a view listing the
 * node alive with a *higher* incarnation admits it again (a paused process that resumes keeps its
 * old incarnation and stays fenced). Memory nodes, switches and the coordinator are never fenced:
 * their verbs are the ones doing recovery. Nor is the table's own node (`self`).
 */
export class FenceTable {
  private readonly fences = new Map<NodeId, Fence>();
  /** Highest incarnation seen alive per node, so an old incarnation's fence is never lifted by itself. */
  private readonly admitted = new Map<NodeId, bigint>();
  private epoch = 0n;
  private readonly self: NodeId | undefined;

  constructor(options: FenceTableOptions = {}) {
    this.self = options.self;
  }

  /** Applies a membership view; returns the fences it added (for the recovery that must follow). */
  applyView(epoch: bigint, members: readonly ViewMember[]): Fence[] {
    if (epoch < this.epoch) return [];
    this.epoch = epoch;
    const added: Fence[] = [];
    // A compute node that leaves the view is failed too (a restarted coordinator lists only the
    // members it heard during its warm-up): fence the incarnation we last saw alive.
    const listed = new Set(members.filter((m) => m.role === 'compute').map((m) => m.node));
    for (const [node, incarnation] of this.admitted) {
      if (listed.has(node)) continue;
      const fence = this.fence(node, incarnation, epoch);
      if (fence) added.push(fence);
    }
    for (const m of members) {
      if (m.role !== 'compute') continue;
      if (m.state === 'dead') {
        const fence = this.fence(m.node, m.incarnation, epoch);
        if (fence) added.push(fence);
      } else {
        this.admit(m.node, m.incarnation);
      }
    }
    return added;
  }

  /** Applies a failure notice; returns the fence when it is new. */
  applyFailure(role: string, node: NodeId, incarnation: bigint, epoch: bigint): Fence | undefined {
    if (role !== 'compute' || epoch < this.epoch) return undefined;
    this.epoch = epoch;
    return this.fence(node, incarnation, epoch);
  }

  /** The fence that stops `node`'s verbs, if any. */
  fenceOf(node: NodeId): Fence | undefined {
    return this.fences.get(node);
  }

  all(): Fence[] {
    return [...this.fences.values()];
  }

  get currentEpoch(): bigint {
    return this.epoch;
  }

  private fence(node: NodeId, incarnation: bigint, epoch: bigint): Fence | undefined {
    if (node === this.self) return undefined;
    // A newer incarnation is already admitted: the dead one is gone, nothing to fence.
    if ((this.admitted.get(node) ?? -1n) > incarnation) return undefined;
    const existing = this.fences.get(node);
    if (existing && existing.incarnation >= incarnation) return undefined;
    const fence = { node, incarnation, epoch };
    this.fences.set(node, fence);
    return fence;
  }

  private admit(node: NodeId, incarnation: bigint): void {
    const fence = this.fences.get(node);
    if (fence && incarnation <= fence.incarnation) return;
    this.fences.delete(node);
    if (incarnation > (this.admitted.get(node) ?? -1n)) this.admitted.set(node, incarnation);
  }
}

/** The completion detail a fenced initiator gets: names the node, incarnation and epoch. */
export function fencedDetail(fence: Fence): string {
  return `fenced: compute node ${fence.node} (incarnation ${fence.incarnation}) was declared dead in epoch ${fence.epoch}; its queue pairs are in the error state until it rejoins with a new incarnation`;
}

/**
 * The completions of a doorbell whose initiator is fenced: every work request `bad-rkey` with the
 * fence's detail, as revoked rkeys would complete; undefined when the initiator is not fenced and
 * the batch may run. Checked when the doorbell runs, so a batch that waited behind the fence is
 * refused too.
 */
export function refuseFenced(fences: FenceTable, batch: readonly WorkRequest[], initiator: NodeId): Completion[] | undefined {
  const fence = fences.fenceOf(initiator);
  if (!fence) return undefined;
  const detail = fencedDetail(fence);
  return batch.map(() => ({ status: 'bad-rkey', detail }));
}
