/**
 * First-come-first-served and bounded-bypass checker.
 *
 * Definition. For one lock, take every acquire that completed: `invokeNs`, and `endNs` = its `ok`
 * time if granted, its `fail` time if it gave up. Acquire B *overtakes* acquire A when
 *
 *     A.invokeNs + slackNs < B.invokeNs     (A clearly asked first), and
 *     B.okNs + slackNs < A.endNs            (B was clearly granted while A was still waiting).
 *
 * The second condition implies A was still waiting when B arrived, so both were waiting at once
 * (B possibly only for an instant: a barging B overtakes too). A waiter that gives up (timeout)
 * can still be overtaken up to the moment it leaves. Acquires that never completed (client crashed
 * or run cut) take no part. `slackNs` absorbs what the history cannot see — the time between a
 * protocol's decision and the client recording it — and should exceed the jitter of that delay;
 * with shared waiters granted together, it also keeps near-simultaneous grants from counting.
 *
 * FIFO holds when no acquire is overtaken (`maxBypass` 0). Bounded bypass with bound k holds when
 * no acquire is overtaken more than k times.
 *
 * Cost: O(n log n) per lock — acquires sorted by invoke time, overtakers counted with a Fenwick
 * tree over their grant times.
 */
import type { LockMode } from '@lockfabric/ports';
import { ClientKeyedMap, HistoryColumns } from './columns.js';
import type { HistoryInput } from './columns.js';
import { FLAG_EXCLUSIVE, FLAG_RELEASE, PHASE_INVOKE, PHASE_OK } from './history.js';

export interface AcquireRecord {
  readonly client: string;
  readonly lock: number;
  readonly mode: LockMode;
  readonly invokeNs: number;
  /** Time of the ok (granted) or of the fail (gave up). */
  readonly endNs: number;
  readonly granted: boolean;
}

export interface FifoOptions {
  /** Tolerance in ns on both comparisons of the definition; default 0. */
  readonly slackNs?: number;
  /** How many overtakes one acquire may suffer; 0 (default) is strict FIFO. */
  readonly maxBypass?: number;
  /** Violations listed in the report (all are counted); default 100. */
  readonly maxViolations?: number;
  /** Overtakers listed per violation; default 5. */
  readonly maxWitnesses?: number;
}

export interface FifoViolation {
  readonly lock: number;
  readonly waiter: AcquireRecord;
  /** How many acquires overtook `waiter`. */
  readonly overtakes: number;
  /** Some of them, earliest grant first. */
  readonly overtakers: readonly AcquireRecord[];
}

export interface FifoReport {
  readonly ok: boolean;
  readonly maxBypass: number;
  readonly slackNs: number;
  /** Most overtakes suffered by one acquire. */
  readonly maxOvertakesObserved: number;
  /** Sum of overtakes over all acquires. */
  readonly totalOvertakes: number;
  /** Acquires overtaken more than `maxBypass` times. */
  readonly violationCount: number;
  readonly violations: readonly FifoViolation[];
  readonly acquiresConsidered: number;
}

/** Completed acquires in columns, numbered in order of completion. */
interface AcquireColumns {
  readonly count: number;
  readonly clients: Uint32Array;
  readonly locks: Float64Array;
  readonly exclusive: Uint8Array;
  readonly invokes: Float64Array;
  readonly ends: Float64Array;
  readonly granted: Uint8Array;
  readonly clientNames: readonly string[];
}

function acquireColumns(history: HistoryColumns): AcquireColumns {
  let capacity = 0;
  for (let i = 0; i < history.length; i++) {
    const flag = history.flags[i] as number;
    if (!(flag & FLAG_RELEASE) && flag >> 2 !== PHASE_INVOKE) capacity++;
  }
  const a = {
    count: 0,
    clients: new Uint32Array(capacity),
    locks: new Float64Array(capacity),
    exclusive: new Uint8Array(capacity),
    invokes: new Float64Array(capacity),
    ends: new Float64Array(capacity),
    granted: new Uint8Array(capacity),
    clientNames: history.clientNames,
  };
  const pending = new ClientKeyedMap<number>();
  for (let i = 0; i < history.length; i++) {
    const flag = history.flags[i] as number;
    if (flag & FLAG_RELEASE) continue;
    const client = history.clients[i] as number;
    const lock = history.locks[i] as number;
    if (flag >> 2 === PHASE_INVOKE) {
      pending.set(client, lock, i);
      continue;
    }
    const invoke = pending.get(client, lock);
    if (invoke === undefined) continue;
    pending.delete(client, lock);
    const k = a.count++;
    a.clients[k] = client;
    a.locks[k] = lock;
    a.exclusive[k] = (history.flags[invoke] as number) & FLAG_EXCLUSIVE;
    a.invokes[k] = history.times[invoke] as number;
    a.ends[k] = history.times[i] as number;
    a.granted[k] = flag >> 2 === PHASE_OK ? 1 : 0;
  }
  return a;
}

function acquireAt(a: AcquireColumns, k: number): AcquireRecord {
  return {
    client: a.clientNames[a.clients[k] as number] as string,
    lock: a.locks[k] as number,
    mode: a.exclusive[k] ? 'exclusive' : 'shared',
    invokeNs: a.invokes[k] as number,
    endNs: a.ends[k] as number,
    granted: a.granted[k] === 1,
  };
}

/** Pairs acquire invokes with their ok or fail, grouped by lock. */
export function collectAcquires(history: HistoryInput): Map<number, AcquireRecord[]> {
  const a = acquireColumns(HistoryColumns.from(history));
  const byLock = new Map<number, AcquireRecord[]>();
  for (let k = 0; k < a.count; k++) {
    const record = acquireAt(a, k);
    const list = byLock.get(record.lock);
    if (list) list.push(record);
    else byLock.set(record.lock, [record]);
  }
  return byLock;
}

export function checkFifo(history: HistoryInput, options: FifoOptions = {}): FifoReport {
  const slackNs = options.slackNs ?? 0;
  const maxBypass = options.maxBypass ?? 0;
  const maxViolations = options.maxViolations ?? 100;
  const maxWitnesses = options.maxWitnesses ?? 5;
  const violations: FifoViolation[] = [];
  let violationCount = 0;
  let maxOvertakesObserved = 0;
  let totalOvertakes = 0;

  const a = acquireColumns(HistoryColumns.from(history));
  const order = new Uint32Array(a.count);
  for (let k = 0; k < a.count; k++) order[k] = k;
  order.sort((x, y) => (a.locks[x] as number) - (a.locks[y] as number) || x - y);
  for (let from = 0; from < a.count; ) {
    const lock = a.locks[order[from] as number] as number;
    let to = from + 1;
    while (to < a.count && a.locks[order[to] as number] === lock) to++;
    const group = order.subarray(from, to);
    const overtakes = countOvertakes(a, group, slackNs);
    for (let i = 0; i < group.length; i++) {
      const count = overtakes[i] as number;
      totalOvertakes += count;
      if (count > maxOvertakesObserved) maxOvertakesObserved = count;
      if (count <= maxBypass) continue;
      violationCount++;
      if (violations.length >= maxViolations) continue;
      const waiter = acquireAt(a, group[i] as number);
      const overtakers = Array.from(group, (k) => acquireAt(a, k))
        .filter((b) => b.granted && b.invokeNs > waiter.invokeNs + slackNs && b.endNs < waiter.endNs - slackNs)
        .sort((x, y) => x.endNs - y.endNs)
        .slice(0, maxWitnesses);
      violations.push({ lock, waiter, overtakes: count, overtakers });
    }
    from = to;
  }
  return { ok: violationCount === 0, maxBypass, slackNs, maxOvertakesObserved, totalOvertakes, violationCount, violations, acquiresConsidered: a.count };
}

/** For each acquire of one lock's group, how many granted acquires overtook it (see the module comment). */
function countOvertakes(a: AcquireColumns, group: Uint32Array, slackNs: number): Uint32Array {
  const result = new Uint32Array(group.length);
  const grants = Array.from(group).filter((k) => a.granted[k] === 1);
  if (grants.length === 0) return result;

  // Each grant gets a unique position in grant-time order; positions below lowerBound(t) are grants before t.
  const byGrantTime = grants.map((_, g) => g).sort((x, y) => (a.ends[grants[x] as number] as number) - (a.ends[grants[y] as number] as number));
  const grantTimes = new Float64Array(grants.length);
  const position = new Uint32Array(grants.length);
  byGrantTime.forEach((g, pos) => {
    position[g] = pos;
    grantTimes[pos] = a.ends[grants[g] as number] as number;
  });

  const invokeOf = (k: number) => a.invokes[k] as number;
  const grantsByInvoke = grants.map((_, g) => g).sort((x, y) => invokeOf(grants[y] as number) - invokeOf(grants[x] as number));
  const waitersByInvoke = Array.from(group, (_, w) => w).sort((x, y) => invokeOf(group[y] as number) - invokeOf(group[x] as number));
  const tree = new Uint32Array(grants.length + 1);
  let next = 0;
  for (const w of waitersByInvoke) {
    const waiterInvokeNs = invokeOf(group[w] as number);
    // Insert every grant that asked clearly later than this waiter (waiters go by decreasing invoke time).
    while (next < grantsByInvoke.length) {
      const g = grantsByInvoke[next] as number;
      if (!(invokeOf(grants[g] as number) > waiterInvokeNs + slackNs)) break;
      for (let i = (position[g] as number) + 1; i <= grants.length; i += i & -i) tree[i] = (tree[i] as number) + 1;
      next++;
    }
    let count = 0;
    for (let i = lowerBound(grantTimes, (a.ends[group[w] as number] as number) - slackNs); i > 0; i -= i & -i) count += tree[i] as number;
    result[w] = count;
  }
  return result;
}

/** Number of entries of the sorted array strictly below `value`. */
function lowerBound(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function describeFifoViolation(violation: FifoViolation): string {
  const w = violation.waiter;
  const first = violation.overtakers[0];
  const witness = first ? `; first by ${first.client} (${first.mode}, asked ${first.invokeNs}, granted ${first.endNs})` : '';
  return `lock ${violation.lock}: ${w.client} (${w.mode}, asked ${w.invokeNs}, ${w.granted ? 'granted' : 'gave up'} ${w.endNs}) overtaken ${violation.overtakes} times${witness}`;
}
