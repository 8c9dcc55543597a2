import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { AckStatus } from '../wire.js';

/** How long a switch GRANT's request id is remembered for dedup (1 s of virtual time). */
const SWITCH_GRANT_MEMORY_NS = 1_000_000_000;

/**
 * What the receive path has seen already: the per-origin dedup window of sequenced packets (spec
 * §5.1 rule 4, `src:seq` → the status it was ACKed with) and the request ids of switch GRANTs.
 */
export class ReceiveDedup {
  private readonly seen = new Map<string, AckStatus>();
  /** Request ids (`lid:task`) of ①/② GRANTs already received, with when. */
  private readonly switchGrants = new Map<string, number>();

  /**
   * The status a sequenced packet was ACKed with, if it was seen before. The decider's ② copy of
   * an ACQUIRE (`granted`) is told apart from DUP copies of it, which carry the same `src:seq`.
   */
  statusOf(src: NodeId, seq: number, granted = false): AckStatus | undefined {
    return this.seen.get(granted ? `${src}:${seq}:g` : `${src}:${seq}`);
  }

  /** A ② copy also marks the plain `src:seq` seen: a DUP copy after it is a duplicate. */
  record(src: NodeId, seq: number, status: AckStatus, granted = false): void {
    this.seen.set(`${src}:${seq}`, status);
    if (granted) this.seen.set(`${src}:${seq}:g`, status);
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
  }
}
