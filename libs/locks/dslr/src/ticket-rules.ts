/**
 * DSLR's decisions on a ticket, as pure functions of the ticket `t` (the word the acquiring FAA
 * returned), the request's slot count `k` and an observed word `v` (spec §4.3, §5, §6).
 */
import { maxField } from './lock-word.js';
import type { Bakery, Counters } from './lock-word.js';

/** What a request asks for: the two port modes, plus DSLR's update lock (spec §10). */
export type RequestKind = 'shared' | 'exclusive' | 'update';

export function bakeryOf(kind: RequestKind): Bakery {
  return kind === 'shared' ? 'S' : kind === 'exclusive' ? 'X' : 'U';
}

/**
 * Grant conditions (§4.3, §10.4). Shared waits for earlier exclusive and update tickets; exclusive
 * for every earlier ticket; update (read phase) for earlier exclusive and update tickets.
 */
export function isGranted(kind: RequestKind, t: Counters, v: Counters): boolean {
  if (v.nX !== t.maxX || v.nU !== t.maxU) return false;
  return kind !== 'exclusive' || v.nS === t.maxS;
}

/** An update holder may write once every earlier shared ticket is released (§10.1). */
export function isWritable(t: Counters, v: Counters): boolean {
  return v.nS === t.maxS;
}

export interface InvalidationRules {
  /** A1 paper-literal: a shared waiter also fails when `nS > t.maxS` (nS is a count, so this misfires). */
  readonly paperLiteralSharedCheck: boolean;
  /** The moved-backwards test that notices a reset (§6.2); off only in a test mutant. */
  readonly generationCheck: boolean;
}

export type Invalidation = 'skipped' | 'reset' | 'blind';

/** What a waiter remembers of earlier observations, to notice that the word was reset. */
export interface Sightings {
  /** The previous observation: within one generation now-counters never go backwards. */
  readonly last: Counters;
  /**
   * Max counters of the last unfrozen observation (at first, the ticket plus the waiter's own
   * slots). Max counters only fall by withdrawals, and those happen on frozen words only, so an
   * unfrozen sighting is a floor for the rest of the generation.
   */
  readonly maxFloor: Counters;
}

/**
 * Why a waiting ticket no longer counts (§6.2), or undefined while it still does: `skipped` when
 * the now-counters passed it (a skip consumed it), `reset` when the word went backwards (zeroed).
 */
export function invalidation(kind: RequestKind, t: Counters, v: Counters, seen: Sightings, rules: InvalidationRules): Invalidation | undefined {
  if (rules.generationCheck) {
    const { last, maxFloor } = seen;
    if (v.nX < last.nX || v.nS < last.nS || v.nU < last.nU) return 'reset';
    if (v.maxX < maxFloor.maxX || v.maxS < maxFloor.maxS || v.maxU < maxFloor.maxU) return 'reset';
  }
  if (v.nX > t.maxX || v.nU > t.maxU) return 'skipped';
  // For exclusive and update waiters nS can only pass the ticket through a skip; for shared waiters
  // nS counts releases of readers that may finish in any order, so it says nothing (A1).
  if (kind !== 'shared' || rules.paperLiteralSharedCheck) {
    if (v.nS > t.maxS) return 'skipped';
  }
  return undefined;
}

/**
 * The word a skipper installs (§6.4): as if every ticket up to and including its own were released,
 * the max counters kept as read. A shared skipper adds only its own slots to nS (A2 fix), unless
 * `paperLiteralSharedSkip`, which counts every earlier shared slot as released.
 */
export function skipValue(kind: RequestKind, t: Counters, k: number, v: Counters, paperLiteralSharedSkip: boolean): Counters {
  switch (kind) {
    case 'exclusive':
      return { ...v, nX: t.maxX + k, nS: t.maxS, nU: t.maxU };
    case 'update':
      return { ...v, nX: t.maxX, nS: t.maxS, nU: t.maxU + k };
    case 'shared':
      return { ...v, nX: t.maxX, nU: t.maxU, nS: paperLiteralSharedSkip ? t.maxS + k : v.nS + k };
  }
}

/** The word once every ticket up to and including this one is released and no other was issued (§5). */
export function drainedState(kind: RequestKind, t: Counters, k: number): Counters {
  const x = t.maxX + (kind === 'exclusive' ? k : 0);
  const s = t.maxS + (kind === 'shared' ? k : 0);
  const u = t.maxU + (kind === 'update' ? k : 0);
  return { nX: x, nS: s, nU: u, maxX: x, maxS: s, maxU: u };
}

/** Does this ticket's increment carry its max counter across the limit (§5, A10)? */
export function crossesLimit(kind: RequestKind, t: Counters, k: number, counterLimit: number, paperLiteralTest: boolean): boolean {
  const previous = t[maxField(bakeryOf(kind))];
  // The paper tests prev == limit-1, which a k-slot increment can jump over, leaving no resetter.
  if (paperLiteralTest) return previous === counterLimit - 1;
  return previous < counterLimit && previous + k >= counterLimit;
}

/** Tickets still ahead of `t` in `v`: the paper's wait_count, each term clamped at 0 (A13). */
export function ticketsAhead(t: Counters, v: Counters): number {
  return Math.max(0, t.maxX - v.nX) + Math.max(0, t.maxS - v.nS) + Math.max(0, t.maxU - v.nU);
}

/** Slots issued and not released in `v` (the δ of a frozen or draining word, §9). */
export function outstandingSlots(v: Counters): number {
  return Math.max(0, v.maxX - v.nX) + Math.max(0, v.maxS - v.nS) + Math.max(0, v.maxU - v.nU);
}

/**
 * Does `v` still show the ticket `t` (k slots) as held, in the generation of `seen`, the
 * observation that granted it? A holder is passed only by a skip, which moves nX (or nU) past it,
 * and a reset moves counters backwards; while neither happened nobody else can have been granted
 * a conflicting lock, so a release that lands then is safe however late it lands.
 */
export function stillHeld(kind: RequestKind, t: Counters, k: number, v: Counters, seen: Counters): boolean {
  if (v.nX < seen.nX || v.nS < seen.nS || v.nU < seen.nU) return false;
  const own = maxField(bakeryOf(kind));
  if (v[own] < t[own] + k) return false;
  switch (kind) {
    case 'exclusive':
      return v.nX === t.maxX && v.nS === t.maxS && v.nU === t.maxU;
    case 'update':
      // Earlier readers may still release (nS moves); nothing else may pass the update ticket.
      return v.nX === t.maxX && v.nU === t.maxU;
    case 'shared':
      // nS counts releases of readers in any order; an update ticket behind may legitimately
      // release (nU moves); only a skip moves nX past the shared batch.
      return v.nX === t.maxX;
  }
}
