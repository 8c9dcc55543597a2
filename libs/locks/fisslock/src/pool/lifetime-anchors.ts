import type { LockId, NodeId } from '@lockfabric/ports';
import { holderKey } from './agent.js';

/**
 * Per agent lifetime, per sender: a sequence number the decider is known to have processed within
 * this lifetime. The decider takes each sender's packets strictly in seq order (go-back-N), so any
 * packet of that sender with a higher seq was decided in this lifetime too (or a later one, which
 * cannot have begun while this agent is still live). Two anchors are certain:
 * - this machine's own link at install: everything it sends after the agent arrived;
 * - a ② copy the agent counted (GRANTED, neither bounced nor a duplicate): the decider made it
 *   while naming this agent, and a lifetime ends only once its ② copies are counted.
 * The anchors are part of the agent's value (AgentValue.anchors, pool/agent-state.ts): a refused
 * FREE / transfer restores the same agent with them (the lifetime goes on), a new install or a
 * rebuilt agent starts with none (nothing is inferred). These helpers are pure.
 */
export type Anchors = ReadonlyMap<NodeId, number>;

export const NO_ANCHORS: Anchors = new Map();

/** `src` sent packets up to `seq` before or at the start of this lifetime; later ones are in it. */
export function anchorsFrom(src: NodeId, seq: number): Anchors {
  return new Map([[src, seq]]);
}

/** A packet of `src` numbered `seq` was decided within this lifetime (the lowest such seq is kept). */
export function withDecided(anchors: Anchors, src: NodeId, seq: number): Anchors {
  const known = anchors.get(src);
  if (known !== undefined && seq >= known) return anchors;
  return new Map(anchors).set(src, seq);
}

/** Whether the packet `seq` of `src` was certainly decided within this agent's lifetime. */
export function decidedWithin(anchors: Anchors, src: NodeId, seq: number): boolean {
  const known = anchors.get(src);
  return known !== undefined && seq > known;
}

/** How many bounced duplicates a pool remembers the first copy of; the oldest is forgotten first. */
export const BOUNCED_ORIGINS_MAX = 4_096;

/**
 * The seq of a requester's own duplicate ACQUIRE that this machine bounced (no live agent here at
 * the time). The bounced copy travels as this machine's packet with its seq, so when it comes back
 * only this record still names the copy the decider first decided. Bounded: a forgotten one is
 * queued as a plain waiter (the old behaviour), never counted.
 */
export class BouncedOrigins {
  private readonly seqs = new Map<string, number>();

  constructor(private readonly max = BOUNCED_ORIGINS_MAX) {}

  note(lid: LockId, mid: NodeId, task: number, seq: number): void {
    const k = `${lid}:${holderKey(mid, task)}`;
    this.seqs.delete(k);
    this.seqs.set(k, seq);
    if (this.seqs.size > this.max) this.seqs.delete(this.seqs.keys().next().value as string);
  }

  seqOf(lid: LockId, mid: NodeId, task: number): number | undefined {
    return this.seqs.get(`${lid}:${holderKey(mid, task)}`);
  }
}
