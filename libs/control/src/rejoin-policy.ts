import type { NodeId } from '@lockfabric/ports';

/** A member of a membership view, as the rejoin decision reads it. */
export interface ViewEntry {
  readonly role: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
  readonly state: 'alive' | 'suspect' | 'dead';
}

/** What the policy concluded from one view or notice. */
export type RejoinDecision = { readonly rejoin: true; readonly reason: string } | { readonly rejoin: false };

const STAY: RejoinDecision = { rejoin: false };

/**
 * When a running compute node must rejoin: the coordinator declared *this* incarnation dead (a
 * false suspicion — a partition or a stall longer than detection), so memory nodes fence it and
 * lock servers dropped its holds; staying as it is would leave it fenced forever. Pure state over
 * the views and notices it is shown, in arrival order.
 *
 * Rules, matching how memory nodes fence (libs/live/src/fence-table.ts, shared with this node's own memory server):
 * - a view listing this node's current incarnation `dead`, or a failure notice naming it → rejoin;
 * - a view that no longer lists this node at all, once a view had listed the current incarnation
 *   alive → rejoin (memory nodes fence a node that leaves the view);
 * - a view older than the newest one seen (epoch) → nothing: it says nothing about now;
 * - another incarnation of this node (an earlier life, or one not yet heard of) → nothing;
 * - before the node knows its own incarnation → nothing (it cannot tell whose death a view reports).
 * After `rejoined(next)` only views about `next` count.
 */
export class RejoinPolicy {
  private incarnation: bigint | undefined;
  private epoch = -1n;
  /** A view listed the current incarnation alive: leaving the view now means being fenced. */
  private admitted = false;

  constructor(
    readonly node: NodeId,
    incarnation?: bigint,
  ) {
    this.incarnation = incarnation;
  }

  /** The incarnation this node heartbeats with now; undefined until learned. */
  get current(): bigint | undefined {
    return this.incarnation;
  }

  /** Learns the incarnation the node started with (from its own first heartbeat); later calls are ignored. */
  learn(incarnation: bigint): void {
    this.incarnation ??= incarnation;
  }

  /** The node now heartbeats as `incarnation` (higher than before): start over for it. */
  rejoined(incarnation: bigint): void {
    if (this.incarnation !== undefined && incarnation <= this.incarnation) throw new RangeError(`a rejoin needs a higher incarnation than ${this.incarnation}, got ${incarnation}`);
    this.incarnation = incarnation;
    this.admitted = false;
  }

  view(epoch: bigint, members: readonly ViewEntry[]): RejoinDecision {
    if (epoch < this.epoch) return STAY;
    this.epoch = epoch;
    const self = this.incarnation;
    if (self === undefined) return STAY;
    const entries = members.filter((m) => m.role === 'compute' && m.node === this.node);
    const mine = entries.find((m) => m.incarnation === self);
    if (mine?.state === 'dead') return { rejoin: true, reason: `the view of epoch ${epoch} lists compute node ${this.node} incarnation ${self} dead` };
    if (mine) {
      this.admitted = true;
      return STAY;
    }
    if (this.admitted && entries.length === 0) return { rejoin: true, reason: `the view of epoch ${epoch} no longer lists compute node ${this.node} (incarnation ${self})` };
    return STAY;
  }

  failure(epoch: bigint, role: string, node: NodeId, incarnation: bigint): RejoinDecision {
    if (role !== 'compute' || node !== this.node || epoch < this.epoch) return STAY;
    this.epoch = epoch;
    if (this.incarnation === undefined || incarnation !== this.incarnation) return STAY;
    return { rejoin: true, reason: `a failure notice of epoch ${epoch} declares compute node ${this.node} incarnation ${incarnation} dead` };
  }
}
