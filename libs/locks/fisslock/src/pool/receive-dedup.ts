import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { AckStatus } from '../wire.js';

/** How long a switch GRANT's request id, or a sequenced packet's `src:seq`, is remembered for dedup (1 s). */
const SWITCH_GRANT_MEMORY_NS = 1_000_000_000;
const SEQUENCED_MEMORY_NS = 1_000_000_000;
/** Below this many remembered packets nothing is pruned (pruning walks the oldest entries). */
const SEQUENCED_PRUNE_ABOVE = 4_096;

/**
 * What the receive path has seen already: the per-origin dedup window of sequenced packets (spec
 * §5.1 rule 4, `src:seq` → the status it was ACKed with) and the request ids of switch GRANTs.
 */
export class ReceiveDedup {
  /**
   * `src:seq` (and `src:seq:g`) → ACK status and when it was recorded, in recording order. Bounded
   * in time: a copy cannot arrive a second after its first (links add µs to ms), so entries older
   * than SEQUENCED_MEMORY_NS are dropped once the map is large — the map holds at most one second
   * of this machine's incoming sequenced packets.
   */
  private readonly seen = new Map<string, { readonly status: AckStatus; readonly dup: boolean; readonly atNs: number }>();
  /** Keys in recording order with their times, consumed from `head` when pruning (no Map-iteration over holes). */
  private order: { key: string; atNs: number }[] = [];
  private head = 0;
  /** Request ids (`lid:task`) of ①/② GRANTs already received, with when. */
  private readonly switchGrants = new Map<string, number>();

  /**
   * The status a sequenced packet was ACKed with, if it was seen before. The decider's ② copy of
   * an ACQUIRE (`granted`) is told apart from DUP copies of it, which carry the same `src:seq`.
   */
  statusOf(src: NodeId, seq: number, granted = false): AckStatus | undefined {
    return this.seenOf(src, seq, granted)?.status;
  }

  /** As statusOf, with whether the copy that was processed carried DUP (what its ACK said, §5.2 REACHED). */
  seenOf(src: NodeId, seq: number, granted = false): { readonly status: AckStatus; readonly dup: boolean } | undefined {
    return this.seen.get(granted ? `${src}:${seq}:g` : `${src}:${seq}`);
  }

  /** A ② copy also marks the plain `src:seq` seen: a DUP copy after it is a duplicate. `dup`: the processed copy carried DUP. */
  record(src: NodeId, seq: number, status: AckStatus, granted: boolean, nowNs: number, dup = false): void {
    this.remember(`${src}:${seq}`, status, dup, nowNs);
    if (granted) this.remember(`${src}:${seq}:g`, status, dup, nowNs);
    if (this.seen.size <= SEQUENCED_PRUNE_ABOVE) return;
    while (this.head < this.order.length) {
      const oldest = this.order[this.head]!;
      if (nowNs - oldest.atNs <= SEQUENCED_MEMORY_NS) break;
      // a key recorded again later has a newer time in the map: that later record keeps it
      if (this.seen.get(oldest.key)?.atNs === oldest.atNs) this.seen.delete(oldest.key);
      this.head++;
    }
    if (this.head > 4_096 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  /** Remembered packets (for tests and metrics). */
  get sequencedSize(): number {
    return this.seen.size;
  }

  private remember(key: string, status: AckStatus, dup: boolean, nowNs: number): void {
    this.seen.set(key, { status, dup, atNs: nowNs });
    this.order.push({ key, atNs: nowNs });
  }

  /**
   * A switch GRANT names one request (`task` carries the request id); a second copy of it, made by
   * a duplicating link, would install a second agent or release a grant twice. Ids are kept for
   * `SWITCH_GRANT_MEMORY_NS` of virtual time, far beyond any delay a link adds.
   */
  isSwitchGrantDuplicate(p: LockPacket, nowNs: number): boolean {
    const id = `${p.lock}:${p.task}`;
    if (this.switchGrants.has(id)) return true;
    this.switchGrants.set(id, nowNs);
    if (this.switchGrants.size > 4_096) {
      for (const [old, atNs] of this.switchGrants) if (nowNs - atNs > SWITCH_GRANT_MEMORY_NS) this.switchGrants.delete(old);
    }
    return false;
  }

  /** Forgets the sequenced window (recovery restarts sequence numbers); switch GRANT ids stay. */
  clearSequenced(): void {
    this.seen.clear();
    this.order = [];
    this.head = 0;
  }
}

/**
 * The DUP bit of a re-ACK (the answer to a copy already seen). A re-ACK stands in for the first
 * ACK, which may have been lost. For BOUNCED its DUP bit tells the requester whether the request
 * is on its way to be decided (§5.2 REACHED): a non-DUP copy that bounced here travels on as this
 * machine's packet and the switch decides it again, whatever copy comes next. So DUP only if the
 * bounced copy and this one both carry it. Taking this copy's DUP bit alone told a requester whose
 * first ACK was lost that its request might be a lost ① grant, so its abort went unREACHED and
 * could take the switch's timeout-free (tests/reack-bounced-duplicate.test.ts). Other statuses
 * carry this copy's bit.
 */
export function reAckDup(seen: { readonly status: AckStatus; readonly dup: boolean }, copyDup: boolean): boolean {
  return seen.status === 'bounced' ? seen.dup && copyDup : copyDup;
}
