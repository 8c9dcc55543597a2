import type { LockId, LockPacket, NodeId } from '@lockfabric/ports';
import { WAITER_COUNT_SHIFT } from '../wire.js';
import type { Waiter } from './agent.js';

/** Entries older than this (1 s of virtual time) belong to a transfer whose GRANT was refused. */
const ORPHAN_AFTER_NS = 1_000_000_000;

/**
 * A transfer (⑧) arrives as one sequenced entry per wait-queue element, sent just before the GRANT
 * that carries their count; links may reorder them. The GRANT waits here until all its entries did.
 */
export class TransferAssembly {
  /** Entries by `src:seq`, with their lock and arrival time. */
  private readonly entries = new Map<string, Waiter & { readonly lid: LockId; readonly atNs: number; readonly src: NodeId }>();
  private readonly grants: LockPacket[] = [];

  /** `streamOf`: the sender's sequence window of a packet (its machine, and its switch with several racks). */
  constructor(private readonly streamOf: (p: LockPacket) => number = (p) => p.agent ?? p.machine) {}

  addEntry(p: LockPacket, nowNs: number): void {
    this.entries.set(`${this.streamOf(p)}:${p.seq}`, { mid: p.machine, task: p.task, mode: p.mode, lid: p.lock, atNs: nowNs, src: p.agent ?? p.machine });
    // entries of a refused transfer never see their GRANT: keep the map bounded
    if (this.entries.size > 4_096) for (const [id, e] of this.entries) if (nowNs - e.atNs > ORPHAN_AFTER_NS) this.entries.delete(id);
  }

  /** Whether entries of a transfer of `lid` to this machine arrived since `sinceNs` and still wait for their GRANT (sent by another machine than `notFrom`). */
  hasEntriesFor(lid: LockId, sinceNs: number, notFrom?: NodeId): boolean {
    for (const e of this.entries.values()) if (e.lid === lid && e.atNs >= sinceNs && e.src !== notFrom) return true;
    return false;
  }

  addGrant(g: LockPacket): void {
    this.grants.push(g);
  }

  /** Whether a transfer GRANT for `lid` waits for its entries. */
  hasGrantFor(lid: LockId): boolean {
    return this.grants.some((g) => g.lock === lid);
  }

  /** Removes and returns every GRANT whose entries have all arrived, with its wait queue, in arrival order. */
  takeComplete(): { grant: LockPacket; queue: Waiter[] }[] {
    const done: { grant: LockPacket; queue: Waiter[] }[] = [];
    for (let i = 0; i < this.grants.length; i++) {
      const g = this.grants[i] as LockPacket;
      const count = g.flags >>> WAITER_COUNT_SHIFT;
      const src = this.streamOf(g);
      const ids = Array.from({ length: count }, (_, k) => `${src}:${g.seq - count + k}`);
      if (!ids.every((id) => this.entries.has(id))) continue;
      const queue = ids.map((id) => {
        const e = this.entries.get(id) as Waiter;
        return { mid: e.mid, task: e.task, mode: e.mode };
      });
      for (const id of ids) this.entries.delete(id);
      this.grants.splice(i--, 1);
      done.push({ grant: g, queue });
    }
    return done;
  }

  /** Drops the entries and GRANTs of one lock (a per-lock repair rebuilds its agent). */
  forgetLock(lid: LockId): void {
    for (const [id, e] of this.entries) if (e.lid === lid) this.entries.delete(id);
    for (let i = this.grants.length - 1; i >= 0; i--) if (this.grants[i]?.lock === lid) this.grants.splice(i, 1);
  }

  clear(): void {
    this.entries.clear();
    this.grants.length = 0;
  }
}
