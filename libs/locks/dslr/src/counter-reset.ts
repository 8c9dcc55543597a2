/**
 * Counter-overflow machinery (spec §7): withdrawing a bounced ticket, the frozen-word watchdog of
 * bouncers and the designated resetter's drain-and-zero (its release is `fencedRelease`).
 */
import type { LockId } from '@lockfabric/ports';
import type { DslrContext } from './context.js';
import { addWord, sameNow } from './lock-word.js';
import type { CounterField, Counters } from './lock-word.js';
import type { LockWordAccess } from './lock-word-access.js';
import { outstandingSlots } from './ticket-rules.js';

export type DrainOutcome = 'zeroed' | 'forced-zero' | 'reset-elsewhere';

interface BounceWatch {
  /** Now-counters seen on the first bounce that showed them. */
  readonly seen: Counters;
  /** Completion time of that bounce (the conservative start of the silence). */
  readonly sinceNs: number;
  /** Completion time of the latest bounce that showed them. */
  lastNs: number;
}

function wentBackwards(v: Counters, reference: Counters): boolean {
  return v.nX < reference.nX || v.nS < reference.nS || v.nU < reference.nU;
}

export class CounterReset {
  private readonly watches = new Map<LockId, BounceWatch>();

  constructor(private readonly context: DslrContext) {}

  /**
   * Undoes a bounced FAA of `k` on `field`, `ticket` being the word it returned (§7.3). By default
   * a CAS loop that stops once a reset shows (the word unfrozen, or now-counters behind the
   * ticket's): the reset already wiped the increment, and subtracting it again would corrupt the
   * next generation (A3). `paperLiteralFaaWithdraw` restores the paper's FAA(−k).
   */
  async withdraw(access: LockWordAccess, ticket: bigint, field: CounterField, k: number): Promise<'withdrawn' | 'wiped'> {
    const { layout } = this.context;
    if (this.context.options.paperLiteralFaaWithdraw) {
      await access.faa(layout.decrement(field, k));
      return 'withdrawn';
    }
    const back = layout.decrement(field, k);
    const t = layout.decode(ticket);
    let guess = addWord(ticket, layout.increment(field, k));
    for (;;) {
      const old = await access.cas(guess, addWord(guess, back));
      if (old === guess) return 'withdrawn';
      const seen = layout.decode(old);
      if (!layout.frozen(seen) || wentBackwards(seen, t)) return 'wiped';
      guess = old;
    }
  }

  /**
   * The bouncer's watchdog (§7.5): if bounces keep showing the same now-counters for longer than
   * the stall threshold, the resetter is presumed dead; a fresh READ that still shows the frozen
   * word with those counters is CASed to 0.
   */
  async noteBounce(access: LockWordAccess, seen: Counters, issueNs: number, doneNs: number): Promise<void> {
    const watch = this.watches.get(access.lock);
    const thresholdNs = this.context.stallThresholdNs(outstandingSlots(seen));
    // The silence must have been watched without a gap: a watch left from an earlier generation
    // (this client gave up and came back later) can match counters that regrew to the same values.
    if (!watch || !sameNow(watch.seen, seen) || issueNs - watch.lastNs > thresholdNs) {
      this.watches.set(access.lock, { seen, sinceNs: doneNs, lastNs: doneNs });
      return;
    }
    watch.lastNs = doneNs;
    if (issueNs - watch.sinceNs <= thresholdNs) return;
    const word = await access.read();
    const v = this.context.layout.decode(word);
    if (!this.context.layout.frozen(v) || !sameNow(v, watch.seen)) return;
    if ((await access.cas(word, 0n)) === word) {
      this.watches.delete(access.lock);
      this.context.recordReset(access.lock, 'frozen-watchdog-zero');
    }
  }

  /** A grant on `lock` ends any watch over it. */
  granted(lock: LockId): void {
    this.watches.delete(lock);
  }

  /**
   * The resetter's last duty (§7.2 step 5): wait until the word equals `resetFrom` (every ticket of
   * the generation released, no bounce increment in flight) and CAS it to 0. Stops if someone else
   * reset the word; zeroes it anyway if the now-counters stand still past the stall threshold
   * (a dead holder). `paperLiteralResetterRelease` repeats CAS(resetFrom, 0) until it succeeds.
   */
  async drainAndZero(access: LockWordAccess, resetFrom: bigint): Promise<DrainOutcome> {
    const { layout, options } = this.context;
    const clock = this.context.ports.clock;
    const random = this.context.ports.random;
    if (options.paperLiteralResetterRelease) {
      while ((await access.cas(resetFrom, 0n)) !== resetFrom) await clock.sleep(Math.floor(random.next() * options.backoffBaseNs) + 1);
      this.context.recordReset(access.lock, 'resetter-zero');
      return 'zeroed';
    }
    const target = layout.decode(resetFrom);
    let last: Counters | undefined;
    let stillSinceNs = 0;
    for (;;) {
      const issueNs = clock.nowNs();
      const word = await access.read();
      const doneNs = clock.nowNs();
      if (word === resetFrom) {
        if ((await access.cas(resetFrom, 0n)) === resetFrom) {
          this.context.recordReset(access.lock, 'resetter-zero');
          return 'zeroed';
        }
        continue;
      }
      const v = layout.decode(word);
      const movedPast = v.nX > target.nX || v.nS > target.nS || v.nU > target.nU;
      if (!layout.frozen(v) || movedPast || (last !== undefined && wentBackwards(v, last))) return 'reset-elsewhere';
      if (last === undefined || !sameNow(v, last)) {
        last = v;
        stillSinceNs = doneNs;
      } else if (issueNs - stillSinceNs > this.context.stallThresholdNs(outstandingSlots(v))) {
        if ((await access.cas(word, 0n)) === word) {
          this.context.recordReset(access.lock, 'drain-timeout-zero');
          return 'forced-zero';
        }
        continue;
      }
      // Once only bounce increments are in the way, a short random pause lets their withdrawals land.
      const slotsLeft = target.nX - v.nX + (target.nS - v.nS) + (target.nU - v.nU);
      const pauseNs = slotsLeft > 0 ? this.context.pollWaitNs(slotsLeft) : 0;
      await clock.sleep(pauseNs + Math.floor(random.next() * options.waitUnitNs));
    }
  }
}
