import type { LockId } from '@lockfabric/ports';

/** Marks kept per lock and kind; older ones matter only to copies that old (see prune). */
const MAX_MARKS = 64;

/**
 * What this machine knows, per lock, about the switch's state at positions of its own link (the
 * switch takes a machine's sequenced packets in seq order, so a seq is a point in the decider's
 * history of that lock as this machine's packets see it):
 *
 * - an *ender* is a packet of this machine that may end a lifetime of the lock held here (mid =
 *   this machine): a FREE, an agent GRANT, an abort-only RELEASE (the §5.2 timeout-free). Only this
 *   machine's packets end such a lifetime, since only the agent's machine frees or hands on, and
 *   the timeout-free needs mid = sender.
 * - a *held mark* is a packet of this machine the switch routed back here as a new packet (not
 *   DUP, not a GRANTED copy): at that seq the lock was held with mid = this machine.
 *
 * An ACQUIRE copy of this machine at seq s can have been (or be) decided as a ① grant only on a
 * free lock; it cannot if a held mark lies after the last ender before s — the lifetime seen held
 * there lasts, untouched, until the next ender. See AgentPool.timeoutFreeUnsafe.
 */
export class LifetimeMarks {
  private readonly enders = new Map<LockId, number[]>();
  private readonly held = new Map<LockId, number[]>();

  ender(lid: LockId, seq: number): void {
    add(this.enders, lid, seq);
  }

  heldAt(lid: LockId, seq: number): void {
    add(this.held, lid, seq);
  }

  /** Whether this machine's ACQUIRE copy of `lid` at `seq` may be decided on a free lock (a ① grant). */
  mayFindFree(lid: LockId, seq: number): boolean {
    const held = lastBelow(this.held.get(lid), seq);
    if (held === undefined) return true;
    const ender = lastBelow(this.enders.get(lid), seq);
    return ender !== undefined && ender > held;
  }

  /** Whether this machine sent an ender of `lid` numbered strictly between `after` and `before`. */
  enderBetween(lid: LockId, after: number, before: number): boolean {
    return (this.enders.get(lid) ?? []).some((s) => s > after && s < before);
  }

  clear(): void {
    this.enders.clear();
    this.held.clear();
  }
}

function add(marks: Map<LockId, number[]>, lid: LockId, seq: number): void {
  let list = marks.get(lid);
  if (!list) marks.set(lid, (list = []));
  list.push(seq);
  // Dropping the oldest marks only makes old copies look riskier (a held mark lost) or, for an
  // ender, matters to a copy older than 64 enders of one lock — long resolved.
  if (list.length > MAX_MARKS) list.splice(0, list.length - MAX_MARKS);
}

function lastBelow(list: readonly number[] | undefined, seq: number): number | undefined {
  let best: number | undefined;
  for (const s of list ?? []) if (s < seq && (best === undefined || s > best)) best = s;
  return best;
}
