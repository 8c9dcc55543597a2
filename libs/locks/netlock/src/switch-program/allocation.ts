import type { LockId } from '@lockfabric/ports';

/** What the pre-run trace says about one lock. */
export interface LockProfile {
  readonly lock: LockId;
  /** Requests for the lock in the trace: the value of serving it on the switch. */
  readonly requests: number;
  /** Queue slots it needs: distinct requesters (the most that can queue at once), at least 1. */
  readonly demand: number;
}

/** One hot lock's queue in switch memory: slots [base, base + size). */
export interface QueueAllocation {
  readonly lock: LockId;
  readonly base: number;
  readonly size: number;
}

/** Counts requests and distinct requesters per lock over a trace of (requester, lock) pairs. */
export function profileLockTrace(trace: Iterable<{ readonly lock: LockId; readonly requester: string }>): LockProfile[] {
  const byLock = new Map<LockId, { requests: number; requesters: Set<string> }>();
  for (const { lock, requester } of trace) {
    let entry = byLock.get(lock);
    if (!entry) byLock.set(lock, (entry = { requests: 0, requesters: new Set() }));
    entry.requests++;
    entry.requesters.add(requester);
  }
  return [...byLock].map(([lock, e]) => ({ lock, requests: e.requests, demand: Math.max(1, e.requesters.size) }));
}

/**
 * NetLock's memory allocation as a 0/1 knapsack: choose locks (value = requests, weight = queue
 * slots, capped at `maxQueue`) to maximise the requests served by the switch within `slotBudget`
 * slots. Exact dynamic programming when `locks × budget` is small enough, else greedy by requests
 * per slot (the paper's approximation). Queues are laid out back to back from slot 0.
 */
export function allocateSwitchQueues(profiles: readonly LockProfile[], slotBudget: number, maxQueue = 255, exactLimit = 20_000_000): QueueAllocation[] {
  const items = profiles.filter((p) => p.requests > 0).map((p) => ({ lock: p.lock, value: p.requests, weight: Math.min(maxQueue, Math.max(1, p.demand)) }));
  const budget = Math.max(0, Math.floor(slotBudget));
  let chosen: typeof items;
  if (items.length * (budget + 1) <= exactLimit) {
    const best = new Float64Array(budget + 1);
    const take = items.map(() => new Uint8Array(budget + 1));
    items.forEach((item, i) => {
      for (let w = budget; w >= item.weight; w--) {
        const candidate = (best[w - item.weight] as number) + item.value;
        if (candidate > (best[w] as number)) {
          best[w] = candidate;
          (take[i] as Uint8Array)[w] = 1;
        }
      }
    });
    chosen = [];
    let w = budget;
    for (let i = items.length - 1; i >= 0; i--) {
      if ((take[i] as Uint8Array)[w]) {
        const item = items[i] as (typeof items)[number];
        chosen.push(item);
        w -= item.weight;
      }
    }
  } else {
    chosen = [];
    let left = budget;
    for (const item of [...items].sort((a, b) => b.value / b.weight - a.value / a.weight || a.lock - b.lock)) {
      if (item.weight <= left) {
        chosen.push(item);
        left -= item.weight;
      }
    }
  }
  let base = 0;
  return chosen
    .sort((a, b) => a.lock - b.lock)
    .map((item) => {
      const allocation = { lock: item.lock, base, size: item.weight };
      base += item.weight;
      return allocation;
    });
}
