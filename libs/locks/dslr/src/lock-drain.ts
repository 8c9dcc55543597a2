/**
 * The coordinator's planned reset of one hot lock (spec §7.6 b): freeze the word so that every new
 * request bounces, let the holders and queued waiters drain, zero the word, which reopens it.
 * Clients need no change: a bounce is their ordinary frozen-word path (withdraw, back off, retry,
 * so a new acquire waits, or fails with LockTimeoutError at its deadline).
 */
import { LockTimeoutError, lockAddress } from '@lockfabric/ports';
import type { Clock, LockId, LockTableLayout, Random, Verbs } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { LockWordAccess } from './lock-word-access.js';
import { WordLayout, addWord, drained, sameNow } from './lock-word.js';
import type { Counters } from './lock-word.js';
import { readDslrOptions } from './options.js';
import { outstandingSlots } from './ticket-rules.js';

export interface DrainOptions {
  readonly clock: Clock;
  /** Spreads the retries of the zeroing CAS between bounces; a fixed half-spread without it. */
  readonly random?: Random;
  /** The DSLR options the clients run with (lease, k_max, layout, counter limit); defaults otherwise. */
  readonly protocolOptions?: ProtocolOptions;
  /** Give up (LockTimeoutError) if the lock is not reopened by then; the freeze stays for the bouncers' watchdog. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export type LockDrainOutcome =
  /** Frozen by this call, drained, zeroed: the planned path. */
  | 'drained'
  /** The word had no outstanding ticket: zeroed at once without a freeze. */
  | 'idle-zeroed'
  /** Frozen by this call, but the counters stood still past the stall threshold (a dead holder): zeroed anyway. */
  | 'forced-zero'
  /** The word was already frozen (a client is the designated resetter) or someone else zeroed it: watched until it reopened. */
  | 'reset-elsewhere';

export interface DrainReport {
  readonly lock: LockId;
  readonly outcome: LockDrainOutcome;
  /** The word when this call first read it. */
  readonly before: Counters;
  /** Time from the first READ to the reopening, on `clock`. */
  readonly elapsedNs: number;
  readonly verbs: number;
}

/**
 * Freeze-and-drain of `lock`: READ; if nothing is outstanding, CAS it to 0. Otherwise CAS maxX to
 * exactly COUNT_MAX (the canary; a CAS so an already frozen word is never pushed further), poll
 * until the word is the frozen image of its drained state, and CAS it to 0. If the counters stand
 * still for the stall threshold (2λ·clamp(δ, 1, k_max)) the holder is presumed dead and the word is
 * zeroed anyway; waiters notice the reset by the generation check. A word already frozen by a
 * client (whose designated resetter will zero it) is only watched, with the same stall rule.
 */
export async function drainDslrLock(verbs: Verbs, table: LockTableLayout, lock: LockId, options: DrainOptions): Promise<DrainReport> {
  const dslr = readDslrOptions(options.protocolOptions);
  const layout = WordLayout.of(dslr.layout, dslr.counterLimit);
  const { clock } = options;
  const meter = { verbs: 0 };
  const access = new LockWordAccess(verbs, lockAddress(table, lock), lock, meter);
  const startNs = clock.nowNs();
  const deadlineNs = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : startNs + options.timeoutMs * 1_000_000;
  const stallNs = (v: Counters, target: Counters | undefined) => 2 * dslr.leaseNs * Math.min(Math.max(slotsLeft(v, target), 1), dslr.maxSlots);
  const pollNs = (v: Counters, target: Counters | undefined) => Math.min(Math.max(slotsLeft(v, target) * dslr.waitUnitNs, dslr.waitUnitNs), dslr.leaseNs / 2);
  const report = (outcome: LockDrainOutcome, before: Counters): DrainReport => ({ lock, outcome, before, elapsedNs: clock.nowNs() - startNs, verbs: meter.verbs });
  const pause = async (ns: number) => {
    if (clock.nowNs() >= deadlineNs) throw new LockTimeoutError(lock, 'exclusive', options.timeoutMs ?? 0);
    await clock.sleep(Math.min(ns, Math.max(1, deadlineNs - clock.nowNs())), options.signal);
  };

  // Issue time of the observation `word` came from: the stall interval ends there (§6.3).
  let observedNs = clock.nowNs();
  let word = await access.read();
  const before = layout.decode(word);
  // The drained image of the generation we froze: no ticket is drawn after the freeze, so it is
  // known at once. Undefined when the word was frozen by a client (its resetter zeroes it).
  let target: Counters | undefined;
  for (;;) {
    const v = layout.decode(word);
    if (layout.frozen(v)) break;
    if (drained(v)) {
      if (word === 0n) return report('idle-zeroed', before);
      const old = await access.cas(word, 0n);
      if (old === word) return report('idle-zeroed', before);
      word = old;
      continue;
    }
    const frozenWord = addWord(word, layout.increment('maxX', layout.counterLimit - v.maxX));
    observedNs = clock.nowNs();
    const old = await access.cas(word, frozenWord);
    if (old === word) {
      target = { nX: v.maxX, nS: v.maxS, nU: v.maxU, maxX: layout.counterLimit, maxS: v.maxS, maxU: v.maxU };
      word = frozenWord;
      break;
    }
    word = old;
  }

  let last = layout.decode(word);
  let stillSinceNs = clock.nowNs();
  for (;;) {
    const v = layout.decode(word);
    if (!layout.frozen(v) || v.nX < last.nX || v.nS < last.nS || v.nU < last.nU) {
      // Someone else zeroed it (a client resetter, or the bouncers' watchdog): it is open again.
      return report('reset-elsewhere', before);
    }
    if (target && sameNow(v, target)) {
      // Drained. Bounces still add and withdraw transient increments, so CAS the exact image and
      // retry after a short random pause until one lands between two bounces.
      const targetWord = layout.encode(target);
      observedNs = clock.nowNs();
      const old = await access.cas(targetWord, 0n);
      if (old === targetWord) return report('drained', before);
      word = old;
      await pause(1 + Math.floor((options.random?.next() ?? 0.5) * 2 * dslr.waitUnitNs));
      continue;
    }
    if (!sameNow(v, last)) {
      // The stall runs from when the new counters were first seen (after the read completed).
      last = v;
      stillSinceNs = clock.nowNs();
    } else if (observedNs - stillSinceNs > stallNs(v, target)) {
      observedNs = clock.nowNs();
      const old = await access.cas(word, 0n);
      if (old === word) return report('forced-zero', before);
      word = old;
      continue;
    }
    await pause(pollNs(v, target));
    observedNs = clock.nowNs();
    word = await access.read();
  }
}

/** Slots still out: against the frozen image when we froze the word (its maxX is the canary, not a count). */
function slotsLeft(v: Counters, target: Counters | undefined): number {
  if (!target) return outstandingSlots(v);
  return Math.max(0, target.nX - v.nX) + Math.max(0, target.nS - v.nS) + Math.max(0, target.nU - v.nU);
}
