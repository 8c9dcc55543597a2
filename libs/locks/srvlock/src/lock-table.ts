import type { LockId, LockMode, NodeId, SpanContextRef } from '@lockfabric/ports';

/** How a request reached its lock manager, so the reply goes back the same way. */
export type RequestChannel = 'packet' | 'local';

export interface LockRequest {
  readonly lock: LockId;
  readonly mode: LockMode;
  readonly machine: NodeId;
  readonly task: number;
  readonly rid: number;
  readonly channel: RequestChannel;
  /** The run epoch the request was stamped with (a server that outlives runs, see LockServer); absent: 0. */
  readonly run?: number;
}

export interface LockTableOptions {
  /** Test-only mutant: one release clears every holder (a reader's release also ends other readers). */
  readonly mutantReleaseAllHolders?: boolean;
  /**
   * Reader reordering (DSLR §6.4, Traditional_RO): an arriving shared request is granted past
   * waiting exclusive ones while the lock is held shared, at most this many times per waiting
   * exclusive request (so writers do not starve). Absent: strict FIFO.
   */
  readonly readerBypass?: number;
  /** Test-only mutant of `readerBypass`: the bound is ignored (writers can starve). */
  readonly mutantUnboundedBypass?: boolean;
}

interface Entry {
  readonly holders: Map<string, LockRequest>;
  readonly queue: LockRequest[];
  /** Reader reordering: how often each waiting exclusive request (by key) was passed by a reader. */
  readonly bypassed: Map<string, number>;
}

export type AcquireOutcome = 'granted' | 'queued' | 'already-held' | 'already-queued' | 'stale';

export function requestKey(machine: NodeId, task: number, rid: number): string {
  return `${machine}/${task}/${rid}`;
}

/**
 * A classic centralized lock manager (mode + holder set + FIFO wait queue per lock). Strict FIFO:
 * a request is granted on arrival only when nobody waits and it is compatible with the holders;
 * on release the queue head and, if shared, the shared run behind it are granted.
 */
export class LockTable {
  private readonly entries = new Map<LockId, Entry>();

  constructor(private readonly options: LockTableOptions = {}) {}

  /** `stale`: the request id is not newer than the task's newest, so only an existing record is reported. */
  acquire(request: LockRequest, stale = false): { outcome: AcquireOutcome; granted: LockRequest[] } {
    const entry = this.entry(request.lock);
    const key = requestKey(request.machine, request.task, request.rid);
    if (entry.holders.has(key)) return { outcome: 'already-held', granted: [] };
    if (entry.queue.some((r) => requestKey(r.machine, r.task, r.rid) === key)) return { outcome: 'already-queued', granted: [] };
    if (stale) {
      if (entry.holders.size === 0 && entry.queue.length === 0) this.entries.delete(request.lock);
      return { outcome: 'stale', granted: [] };
    }
    if (entry.queue.length === 0 && compatible(entry, request.mode)) {
      entry.holders.set(key, request);
      return { outcome: 'granted', granted: [request] };
    }
    if (this.readerMayPass(entry, request.mode)) {
      for (const waiter of entry.queue) if (waiter.mode === 'exclusive') bump(entry.bypassed, requestKey(waiter.machine, waiter.task, waiter.rid));
      entry.holders.set(key, request);
      return { outcome: 'granted', granted: [request] };
    }
    entry.queue.push(request);
    return { outcome: 'queued', granted: [] };
  }

  /** Ends a holding (or withdraws a waiter when `cancel`); returns the waiters granted as a result. */
  release(lock: LockId, machine: NodeId, task: number, rid: number, _trace?: SpanContextRef): LockRequest[] {
    const entry = this.entries.get(lock);
    if (!entry) return [];
    const key = requestKey(machine, task, rid);
    if (entry.holders.has(key)) {
      if (this.options.mutantReleaseAllHolders) entry.holders.clear();
      else entry.holders.delete(key);
    } else {
      const at = entry.queue.findIndex((r) => requestKey(r.machine, r.task, r.rid) === key);
      if (at < 0) return [];
      entry.queue.splice(at, 1);
    }
    entry.bypassed.delete(key);
    const granted = this.grantWaiters(entry);
    if (entry.holders.size === 0 && entry.queue.length === 0) this.entries.delete(lock);
    return granted;
  }

  holders(lock: LockId): LockRequest[] {
    return [...(this.entries.get(lock)?.holders.values() ?? [])];
  }

  waiters(lock: LockId): LockRequest[] {
    return [...(this.entries.get(lock)?.queue ?? [])];
  }

  /** Drops every holder and waiter (a new run began); returns how many there were. */
  clear(): number {
    let dropped = 0;
    for (const entry of this.entries.values()) dropped += entry.holders.size + entry.queue.length;
    this.entries.clear();
    return dropped;
  }

  /** Ids of the locks with any holder or waiter (a snapshot: safe to change the table while iterating). */
  lockIds(): LockId[] {
    return [...this.entries.keys()];
  }

  /** Locks with any holder or waiter. */
  get activeLocks(): number {
    return this.entries.size;
  }

  /** Reader reordering: a shared arrival joins shared holders unless some waiting writer was passed enough. */
  private readerMayPass(entry: Entry, mode: LockMode): boolean {
    const bound = this.options.readerBypass;
    if (bound === undefined || mode !== 'shared' || entry.holders.size === 0 || !compatible(entry, 'shared')) return false;
    if (this.options.mutantUnboundedBypass) return true;
    return entry.queue.every((w) => w.mode === 'shared' || (entry.bypassed.get(requestKey(w.machine, w.task, w.rid)) ?? 0) < bound);
  }

  private grantWaiters(entry: Entry): LockRequest[] {
    const granted: LockRequest[] = [];
    for (;;) {
      const head = entry.queue[0];
      if (!head || !compatible(entry, head.mode)) return granted;
      entry.queue.shift();
      entry.bypassed.delete(requestKey(head.machine, head.task, head.rid));
      entry.holders.set(requestKey(head.machine, head.task, head.rid), head);
      granted.push(head);
    }
  }

  private entry(lock: LockId): Entry {
    let entry = this.entries.get(lock);
    if (!entry) {
      entry = { holders: new Map(), queue: [], bypassed: new Map() };
      this.entries.set(lock, entry);
    }
    return entry;
  }
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function compatible(entry: Entry, mode: LockMode): boolean {
  if (entry.holders.size === 0) return true;
  if (mode === 'exclusive') return false;
  for (const holder of entry.holders.values()) if (holder.mode === 'exclusive') return false;
  return true;
}
