import { BoundedSet } from '@lockfabric/locks-common';
import type { LockPacket } from '@lockfabric/ports';
import { holderKey } from './agent.js';

const idOf = (p: LockPacket): string => `${p.lock}:${holderKey(p.machine, p.task)}`;

/** Written-off ② copies remembered: one that never arrives would otherwise stay for the pool's lifetime. */
export const WRITTEN_OFF_MAX = 4_096;

/**
 * The lost-packet bookkeeping of RELEASEs that keep coming back unprocessed (`lid:mid:task`): when
 * one was first seen stuck, and which ② copies were counted as lost so a late arrival is ignored.
 */
export class StuckReleases {
  private readonly since = new Map<string, number>();
  private readonly writtenOff = new BoundedSet<string>(WRITTEN_OFF_MAX);

  constructor(private readonly stuckAfterNs: number) {}

  get afterNs(): number {
    return this.stuckAfterNs;
  }

  /**
   * True once the same RELEASE has come back to this pool unprocessed for `stuckAfterNs`: longer
   * than any delay the links add plus several retransmissions, so what it waits for is lost, not late.
   */
  longEnough(p: LockPacket, nowNs: number): boolean {
    const id = idOf(p);
    const since = this.since.get(id);
    if (since === undefined) {
      this.since.set(id, nowNs);
      return false;
    }
    if (nowNs - since < this.stuckAfterNs) return false;
    this.since.delete(id);
    return true;
  }

  /**
   * The lock's state on this machine changed (an agent arrived, or an abort freed it at the
   * switch): what was stuck before proves nothing about what is lost now, so every RELEASE of the
   * lock starts its wait again.
   */
  restart(lid: number): void {
    for (const id of this.since.keys()) if (id.startsWith(`${lid}:`)) this.since.delete(id);
  }

  /** The RELEASE was processed after all. */
  resolved(p: LockPacket): void {
    this.since.delete(idOf(p));
  }

  /** The ② copy this RELEASE waited for is counted as lost. */
  writeOff(p: LockPacket): void {
    this.writtenOff.add(idOf(p));
  }

  /** Written-off copies remembered now (at most WRITTEN_OFF_MAX; the oldest is forgotten first). */
  get writtenOffKept(): number {
    return this.writtenOff.size;
  }

  /** True (once) if `p` is a ② copy already written off: it must count nothing. */
  takeWrittenOff(p: LockPacket): boolean {
    return this.writtenOff.delete(idOf(p));
  }
}
