/**
 * Reader-writer exclusion checker.
 *
 * A hold is the interval [acquire ok, release invoke] of one client on one lock. The protocol
 * grants the lock before the client can record `ok`, and frees it only after the client has
 * recorded the release `invoke`, so every recorded hold lies inside the true hold. Hence any
 * overlap of recorded holds is an overlap of true holds: a reported violation is never a false
 * alarm (given one time base for all clients — under `live`, clock skew between machines must be
 * smaller than the gaps the checker looks at). The converse does not hold: a violation hidden
 * inside recording delays goes unseen.
 *
 * Conflicts: exclusive against anything on the same lock. Shared holds may overlap each other.
 * Intervals are half-open, so a hold ending at t and another starting at t do not conflict. A
 * release that fails still ends the recorded hold at its invoke: the checker only claims what
 * the history proves.
 *
 * A hold with no release extends to +∞, unless its client is listed as failed at time T: then it
 * ends at `holdEndForFailedClient(hold, T)`, by default T itself (a lease-based protocol passes the
 * lease expiry instead).
 *
 * Cost: O(n log n) — holds are sorted by (lock, start) and swept once, remembering per lock the
 * hold with the latest end and the exclusive hold with the latest end.
 */
import type { LockMode } from '@lockfabric/ports';
import { ClientKeyedMap, HistoryColumns } from './columns.js';
import type { HistoryInput } from './columns.js';
import { failureTimeNs } from './failed-clients.js';
import type { FailedClients } from './failed-clients.js';
import { FLAG_EXCLUSIVE, FLAG_RELEASE, PHASE_INVOKE, PHASE_OK } from './history.js';

export interface Hold {
  readonly client: string;
  readonly lock: number;
  readonly mode: LockMode;
  readonly startNs: number;
  /** Release invoke time; for unreleased holds see `released`. */
  readonly endNs: number;
  /** False when no release was recorded (the end is +∞ or derived from a client failure). */
  readonly released: boolean;
}

export interface ExclusionViolation {
  readonly lock: number;
  /** The earlier hold that was still held. */
  readonly first: Hold;
  /** The hold that started while `first` was still held, in a conflicting mode. */
  readonly second: Hold;
}

export interface ExclusionOptions {
  readonly failedClients?: FailedClients;
  /** End of an unreleased hold of a client that failed at `failedAtNs`; defaults to `failedAtNs`. */
  readonly holdEndForFailedClient?: (hold: Omit<Hold, 'endNs' | 'released'>, failedAtNs: number) => number;
  /** Violations listed in the report (all are counted); default 100. */
  readonly maxViolations?: number;
}

export interface ExclusionReport {
  readonly ok: boolean;
  /** Holds that conflict with an earlier hold; each is reported once, with one earlier witness. */
  readonly violationCount: number;
  readonly violations: readonly ExclusionViolation[];
  readonly holds: number;
  readonly unreleasedHolds: number;
}

/** Holds in columns, in order of their start. */
interface HoldColumns {
  readonly count: number;
  readonly clients: Uint32Array;
  readonly locks: Float64Array;
  readonly exclusive: Uint8Array;
  readonly starts: Float64Array;
  readonly ends: Float64Array;
  readonly released: Uint8Array;
  readonly clientNames: readonly string[];
}

function holdColumns(history: HistoryColumns, options: ExclusionOptions): HoldColumns {
  let capacity = 0;
  for (let i = 0; i < history.length; i++) if ((history.flags[i] as number) >> 2 === PHASE_OK && !((history.flags[i] as number) & FLAG_RELEASE)) capacity++;
  const clients = new Uint32Array(capacity);
  const locks = new Float64Array(capacity);
  const exclusive = new Uint8Array(capacity);
  const starts = new Float64Array(capacity);
  const ends = new Float64Array(capacity);
  const released = new Uint8Array(capacity);
  // Open holds by (client, lock): one index normally, a queue when a client holds a lock twice (a protocol error).
  const open = new ClientKeyedMap<number | number[]>();
  let count = 0;
  for (let i = 0; i < history.length; i++) {
    const flag = history.flags[i] as number;
    const phase = flag >> 2;
    const client = history.clients[i] as number;
    const lock = history.locks[i] as number;
    if (!(flag & FLAG_RELEASE)) {
      if (phase !== PHASE_OK) continue;
      const h = count++;
      clients[h] = client;
      locks[h] = lock;
      exclusive[h] = flag & FLAG_EXCLUSIVE;
      starts[h] = history.times[i] as number;
      const existing = open.get(client, lock);
      if (existing === undefined) open.set(client, lock, h);
      else if (typeof existing === 'number') open.set(client, lock, [existing, h]);
      else existing.push(h);
    } else if (phase === PHASE_INVOKE) {
      const existing = open.get(client, lock);
      // A release without a hold is a protocol error for the liveness checker, not an exclusion matter.
      if (existing === undefined) continue;
      let h: number;
      if (typeof existing === 'number') {
        h = existing;
        open.delete(client, lock);
      } else {
        h = existing.shift() as number;
        if (existing.length === 0) open.delete(client, lock);
      }
      ends[h] = history.times[i] as number;
      released[h] = 1;
    }
  }
  for (const [client, lock, value] of open.entries()) {
    for (const h of typeof value === 'number' ? [value] : value) {
      const name = history.clientNames[client] as string;
      const failedAtNs = failureTimeNs(options.failedClients, name);
      let endNs = Number.POSITIVE_INFINITY;
      if (failedAtNs !== undefined) {
        const hold = { client: name, lock, mode: exclusive[h] ? 'exclusive' : 'shared', startNs: starts[h] as number } as const;
        endNs = options.holdEndForFailedClient ? options.holdEndForFailedClient(hold, failedAtNs) : failedAtNs;
      }
      ends[h] = Math.max(endNs, starts[h] as number);
    }
  }
  return { count, clients, locks, exclusive, starts, ends, released, clientNames: history.clientNames };
}

function holdAt(holds: HoldColumns, h: number): Hold {
  return {
    client: holds.clientNames[holds.clients[h] as number] as string,
    lock: holds.locks[h] as number,
    mode: holds.exclusive[h] ? 'exclusive' : 'shared',
    startNs: holds.starts[h] as number,
    endNs: holds.ends[h] as number,
    released: holds.released[h] === 1,
  };
}

/** Pairs acquire oks with release invokes into holds, in order of their start. */
export function collectHolds(history: HistoryInput, options: ExclusionOptions = {}): Hold[] {
  const holds = holdColumns(HistoryColumns.from(history), options);
  return Array.from({ length: holds.count }, (_, h) => holdAt(holds, h));
}

export function checkExclusion(history: HistoryInput, options: ExclusionOptions = {}): ExclusionReport {
  const maxViolations = options.maxViolations ?? 100;
  const holds = holdColumns(HistoryColumns.from(history), options);
  const { count, locks, exclusive, starts, ends, released } = holds;
  let unreleasedHolds = 0;
  const order = new Uint32Array(count);
  for (let h = 0; h < count; h++) {
    order[h] = h;
    if (!released[h]) unreleasedHolds++;
  }
  // Holds are numbered in start order, so sorting by (lock, number) gives (lock, start) order.
  order.sort((a, b) => (locks[a] as number) - (locks[b] as number) || a - b);

  const violations: ExclusionViolation[] = [];
  let violationCount = 0;
  let latest = -1;
  let latestExclusive = -1;
  for (let k = 0; k < count; k++) {
    const h = order[k] as number;
    if (k > 0 && locks[order[k - 1] as number] !== locks[h]) {
      latest = -1;
      latestExclusive = -1;
    }
    const witness = exclusive[h] ? latest : latestExclusive;
    if (witness >= 0 && (ends[witness] as number) > (starts[h] as number)) {
      violationCount++;
      if (violations.length < maxViolations) violations.push({ lock: locks[h] as number, first: holdAt(holds, witness), second: holdAt(holds, h) });
    }
    if (latest < 0 || (ends[h] as number) > (ends[latest] as number)) latest = h;
    if (exclusive[h] && (latestExclusive < 0 || (ends[h] as number) > (ends[latestExclusive] as number))) latestExclusive = h;
  }
  return { ok: violationCount === 0, violationCount, violations, holds: count, unreleasedHolds };
}

/** One line per violation, for reports and test failures. */
export function describeExclusionViolation(violation: ExclusionViolation): string {
  const end = (hold: Hold) => (hold.released ? `${hold.endNs}` : hold.endNs === Number.POSITIVE_INFINITY ? '∞' : `${hold.endNs} (client failed)`);
  const show = (hold: Hold) => `${hold.client} ${hold.mode} [${hold.startNs}, ${end(hold)})`;
  return `lock ${violation.lock}: ${show(violation.second)} overlaps ${show(violation.first)}`;
}
