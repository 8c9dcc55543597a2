import { AcquireDeadline, AcquireSpan, LOCK_ATTR } from '@lockfabric/locks-common';
import { ConfigError, LeaseExpiredError, LockAbortedError, NS_PER_MS, clientKey, lockAddress } from '@lockfabric/ports';
import type { ClientPorts, LockClient, LockId, LockMode } from '@lockfabric/ports';
import { DSLR_ATTR, DslrContext } from './context.js';
import { CounterReset } from './counter-reset.js';
import type { DslrAcquireOptions, DslrGrant } from './grant.js';
import { LeaseBrokenError } from './errors.js';
import { fencedRelease } from './fenced-release.js';
import type { FencedReleaseResult } from './fenced-release.js';
import { addWord, drained, maxField, nowField, sameNow, withAdded } from './lock-word.js';
import type { Counters } from './lock-word.js';
import { LockWordAccess } from './lock-word-access.js';
import type { DslrOptions } from './options.js';
import type { PollPacing } from './pacing.js';
import { RetryBackoff } from './retry-backoff.js';
import { bakeryOf, crossesLimit, drainedState, invalidation, isGranted, isWritable, skipValue, ticketsAhead } from './ticket-rules.js';
import type { Invalidation, InvalidationRules, RequestKind, Sightings } from './ticket-rules.js';
import { WaitAttachment } from './wait-attachment.js';

/** A ticket drawn by one FAA on an unfrozen word. */
interface DrawnTicket {
  readonly lock: LockId;
  readonly kind: RequestKind;
  readonly slots: number;
  readonly access: LockWordAccess;
  readonly word: bigint;
  readonly t: Counters;
  readonly issueNs: number;
  readonly doneNs: number;
  readonly resetFrom: bigint | undefined;
}

type WaitOutcome =
  | { readonly kind: 'granted'; readonly leaseStartNs: number; readonly seen: Counters; readonly seenWord: bigint }
  | { readonly kind: 'invalidated'; readonly why: Invalidation }
  | { readonly kind: 'skipped' }
  | { readonly kind: 'abandoned' };

/** How a release ended: written by fenced CAS, refused by the fence, not written past the lease, or the paper's FAA. */
interface ReleaseOutcome {
  readonly outcome: FencedReleaseResult['outcome'] | 'expired' | 'faa';
  readonly casCount: number;
}

/** What the client keeps about a grant it handed out. */
interface HoldState {
  readonly access: LockWordAccess;
  readonly t: Counters;
  /** The observation that showed the grant, and the word with this ticket drawn as last seen. */
  readonly seen: Counters;
  readonly seenWord: bigint;
  writable: boolean;
  released: boolean;
}

/** Below 1: the skipper measures the stall on its own clock, which may run a little fast. */
const BLIND_MARGIN = 0.99;

const ABORT_REASONS: Readonly<Record<Invalidation | 'skipped-self' | 'stale-grant', string>> = {
  'stale-grant': 'the grant was seen only after its lease had run out (the client was paused); waiters may have skipped it',
  skipped: 'a waiter behind skipped this ticket after the counters stalled',
  reset: 'the lock word was reset while this ticket waited',
  blind: 'the waiter saw nothing of the lock word for longer than a skip takes (it was paused): its ticket may have been skipped and the word reset since',
  'skipped-self': 'the tickets ahead stalled for twice their lease; this ticket skipped them and must restart',
};

/**
 * One DSLR lock client (spec §5–§10): a bakery lock per 64-bit word, acquired with one FAA and
 * released with one FAA when uncontended; waiters poll with READ; CAS only repairs (skips of stalled
 * tickets, counter resets, withdrawals of bounced tickets).
 */
export class DslrClient implements LockClient<DslrGrant> {
  private readonly context: DslrContext;
  private readonly reset: CounterReset;
  private readonly backoff: RetryBackoff;
  private readonly rules: InvalidationRules;
  private readonly holds = new WeakMap<DslrGrant, HoldState>();
  private readonly options: DslrOptions;

  constructor(
    private readonly ports: ClientPorts,
    options: DslrOptions,
    private readonly pacing: PollPacing,
    protocolId = 'dslr',
  ) {
    this.context = new DslrContext(ports, options, protocolId);
    this.options = options;
    this.reset = new CounterReset(this.context);
    this.backoff = new RetryBackoff(ports.random, options.backoffBaseNs, options.backoffCapNs);
    this.rules = { paperLiteralSharedCheck: options.paperLiteralSharedCheck, generationCheck: !options.mutantNoGenerationCheck };
  }

  acquire(lock: LockId, mode: LockMode, options?: DslrAcquireOptions): Promise<DslrGrant> {
    return this.request(lock, mode, mode, options);
  }

  /** An update lock (§10): granted alongside earlier readers; write access once they are gone. Needs `updateLocks`. */
  acquireUpdate(lock: LockId, options?: DslrAcquireOptions): Promise<DslrGrant> {
    if (!this.context.layout.hasUpdate) {
      return Promise.reject(new ConfigError(['dslr update locks need the option updateLocks=true (the six-field lock word)']));
    }
    return this.request(lock, 'update', 'exclusive', options);
  }

  /** True when the grant may write: always for exclusive, for an update lock once earlier readers released. */
  canWrite(grant: DslrGrant): boolean {
    if (grant.kind === 'shared') return false;
    return grant.kind === 'exclusive' || this.holdOf(grant).writable;
  }

  /**
   * Waits until an update holder may write (every earlier shared slot released). Fails with
   * LeaseExpiredError when the lease runs out first, LockAbortedError when the ticket was skipped
   * or reset, LockTimeoutError at the deadline (the update lock is still held then).
   */
  async awaitWriteAccess(grant: DslrGrant, options: DslrAcquireOptions = {}): Promise<void> {
    if (grant.kind !== 'update') {
      if (grant.kind === 'shared') throw new ConfigError(['a shared DSLR grant never gets write access; request an update lock']);
      return;
    }
    const hold = this.holdOf(grant);
    if (hold.writable) return;
    const deadline = new AcquireDeadline(this.ports.clock, grant.lock, 'exclusive', options);
    let sightings: Sightings = { last: hold.seen, maxFloor: hold.seen };
    for (;;) {
      if (this.leaseRemainingNs(grant) <= 0) throw new LeaseExpiredError(grant.lock, grant.leaseNs / NS_PER_MS);
      const v = this.context.layout.decode(await hold.access.read());
      if (invalidation('update', hold.t, v, sightings, this.rules) !== undefined) {
        throw new LockAbortedError(grant.lock, 'the update lock was skipped or reset while it waited for readers');
      }
      if (isWritable(hold.t, v)) {
        hold.writable = true;
        return;
      }
      sightings = { last: v, maxFloor: this.context.layout.frozen(v) ? sightings.maxFloor : v };
      await deadline.pause(this.context.pollWaitNs(Math.max(0, hold.t.maxS - v.nS)));
    }
  }

  /** Time left on the grant's lease, on this client's clock. */
  leaseRemainingNs(grant: DslrGrant): number {
    return grant.leaseStartNs + grant.leaseNs - this.ports.clock.nowNs();
  }

  /** Throws LeaseExpiredError unless the lease still runs: call before committing (§8.2, A8). */
  checkLease(grant: DslrGrant): void {
    if (this.leaseRemainingNs(grant) <= 0) throw new LeaseExpiredError(grant.lock, grant.leaseNs / NS_PER_MS);
  }

  /**
   * Releases while the lease runs (Algorithm 3), with a fenced CAS that lands only while the word
   * still shows this ticket held (see `fencedRelease`); `paperLiteralFaaRelease` uses the paper's
   * FAA. Past the lease the ticket may have been skipped, so nothing is written, and
   * LeaseExpiredError says the hold was not exclusive to the end; the same error reports a release
   * the fence refused once the lease is over (a waiter skipped the ticket before the late release
   * landed). A refusal inside the lease is LeaseBrokenError: the protocol failed. The designated
   * resetter releases regardless of its lease (fenced, so a skipped resetter writes nothing) and
   * then zeroes the word.
   */
  async release(grant: DslrGrant): Promise<void> {
    const hold = this.holdOf(grant);
    if (hold.released) return;
    hold.released = true;
    this.ports.phases?.enter('initial-atomic');
    const outcome = await this.withReleaseSpan(grant, (onCas) => this.releaseHeld(grant, hold, onCas));
    if (outcome.outcome === 'expired') throw new LeaseExpiredError(grant.lock, grant.leaseNs / NS_PER_MS);
    if (outcome.outcome === 'fenced') {
      // Refused by the fence: fine once the lease is over (a late release); inside it, a broken margin.
      const remainingNs = this.leaseRemainingNs(grant);
      if (remainingNs <= 0) throw new LeaseExpiredError(grant.lock, grant.leaseNs / NS_PER_MS);
      throw new LeaseBrokenError(grant.lock, remainingNs / NS_PER_MS);
    }
  }

  /** Runs a release inside a `lock.release` span that records its outcome and the CAS it issued. */
  private async withReleaseSpan(grant: DslrGrant, body: (onCas: (casCount: number) => void) => Promise<ReleaseOutcome>): Promise<ReleaseOutcome> {
    const span = this.ports.trace.startSpan('lock.release', {
      attributes: { [LOCK_ATTR.protocol]: this.context.protocolId, [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: clientKey(this.ports.self) },
    });
    try {
      const outcome = await body((casCount) => span.setAttribute(DSLR_ATTR.releaseCas, casCount));
      span.setAttribute(DSLR_ATTR.releaseOutcome, outcome.outcome);
      return outcome;
    } catch (error) {
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  private async releaseHeld(grant: DslrGrant, hold: HoldState, onCas: (casCount: number) => void): Promise<ReleaseOutcome> {
    const expired = this.leaseRemainingNs(grant) <= 0;
    const add = this.context.layout.increment(nowField(bakeryOf(grant.kind)), grant.slots);
    if (grant.resetFrom === undefined) {
      if (expired) return { outcome: 'expired', casCount: 0 };
      if (!this.options.paperLiteralFaaRelease) return this.fencedRelease(grant, hold, add, onCas);
      await hold.access.faa(add);
      return { outcome: 'faa', casCount: 0 };
    }
    let outcome: ReleaseOutcome = { outcome: 'faa', casCount: 0 };
    if (this.options.paperLiteralResetterRelease || (this.options.paperLiteralFaaRelease && !expired)) await hold.access.faa(add);
    else outcome = await this.fencedRelease(grant, hold, add, onCas);
    const drained = await this.reset.drainAndZero(hold.access, grant.resetFrom);
    this.ports.phases?.resetEnd(grant.lock, drained === 'reset-elsewhere' ? 'other' : 'done');
    return expired && outcome.outcome !== 'fenced' ? { ...outcome, outcome: 'expired' } : outcome;
  }

  private fencedRelease(grant: DslrGrant, hold: HoldState, add: bigint, onCas?: (casCount: number) => void): Promise<FencedReleaseResult> {
    return fencedRelease(hold.access, this.context.layout, { kind: grant.kind, t: hold.t, slots: grant.slots, seen: hold.seen, seenWord: hold.seenWord }, add, onCas);
  }

  /**
   * A grant seen only after its lease ran out (the client was paused across it) protects nothing:
   * waiters may have skipped it. It is handed back at once — fenced, so it writes only if nobody
   * skipped it — and the acquire goes on as after an abort.
   */
  private async discardStale(grant: DslrGrant): Promise<void> {
    const hold = this.holdOf(grant);
    if (grant.resetFrom !== undefined) {
      await this.release(grant).catch(() => undefined);
      return;
    }
    hold.released = true;
    if (this.options.paperLiteralFaaRelease) return;
    const add = this.context.layout.increment(nowField(bakeryOf(grant.kind)), grant.slots);
    await this.withReleaseSpan(grant, (onCas) => this.fencedRelease(grant, hold, add, onCas));
  }

  private holdOf(grant: DslrGrant): HoldState {
    const hold = this.holds.get(grant);
    if (!hold) throw new RangeError(`lock ${grant.lock}: this grant was not issued by this DSLR client`);
    return hold;
  }

  private async request(lock: LockId, kind: RequestKind, mode: LockMode, options: DslrAcquireOptions = {}): Promise<DslrGrant> {
    const slots = options.slots ?? this.options.slots;
    if (!Number.isInteger(slots) || slots < 1 || slots > this.options.maxSlots) {
      throw new ConfigError([`dslr slots must be an integer in 1..${this.options.maxSlots} (maxSlots), got ${slots}`]);
    }
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, this.context.protocolId, lock, mode, clientKey(this.ports.self));
    op.span.setAttribute(DSLR_ATTR.kind, kind);
    op.span.setAttribute(DSLR_ATTR.slots, slots);
    const access = new LockWordAccess(this.ports.verbs, lockAddress(this.ports.locks, lock), lock, op);
    try {
      // ShiftLock Table 4 splits DSLR's acquire into its first FAA and everything after it (RT).
      this.ports.phases?.enter('initial-atomic');
      for (;;) {
        deadline.check();
        const drawn = await this.draw(access, lock, kind, slots);
        this.ports.phases?.enter('retries');
        if (drawn === 'bounced') {
          op.retries++;
          if (this.options.paperLiteralAbortOnBounce) throw new LockAbortedError(lock, 'the lock word is frozen until its counters are reset');
          await deadline.pause(this.bounceDelayNs(lock));
          continue;
        }
        const outcome = isGranted(kind, drawn.t, drawn.t)
          ? ({ kind: 'granted', leaseStartNs: drawn.issueNs, seen: drawn.t, seenWord: this.drawnWord(drawn) } as const)
          : await this.waitAttached(drawn, deadline, options.signal, op);
        let reason: string;
        if (outcome.kind === 'granted') {
          const grant = this.grantFor(drawn, outcome.leaseStartNs, outcome.seen, outcome.seenWord);
          if (this.leaseRemainingNs(grant) > 0) {
            op.granted();
            return grant;
          }
          await this.discardStale(grant);
          reason = ABORT_REASONS['stale-grant'];
        } else {
          reason = outcome.kind === 'invalidated' ? ABORT_REASONS[outcome.why] : ABORT_REASONS['skipped-self'];
        }
        if (!this.options.restartOnAbort || outcome.kind === 'abandoned') throw new LockAbortedError(lock, reason);
        op.retries++;
        await deadline.pause(this.backoff.nextDelayNs(lock));
      }
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  /** The word right after this ticket's FAA: what an immediately granted holder knows of it. */
  private drawnWord(drawn: DrawnTicket): bigint {
    return addWord(drawn.word, this.context.layout.increment(maxField(bakeryOf(drawn.kind)), drawn.slots));
  }

  private grantFor(drawn: DrawnTicket, leaseStartNs: number, seen: Counters, seenWord: bigint): DslrGrant {
    this.backoff.granted(drawn.lock);
    this.reset.granted(drawn.lock);
    const mode: LockMode = drawn.kind === 'shared' ? 'shared' : 'exclusive';
    const grant: DslrGrant = {
      lock: drawn.lock,
      mode,
      kind: drawn.kind,
      slots: drawn.slots,
      ticket: drawn.word,
      leaseStartNs,
      leaseNs: this.context.leaseNs(drawn.slots),
      resetFrom: drawn.resetFrom,
    };
    const writable = drawn.kind === 'exclusive' || (drawn.kind === 'update' && isWritable(drawn.t, seen));
    this.holds.set(grant, { access: drawn.access.metered({ verbs: 0 }), t: drawn.t, seen, seenWord, writable, released: false });
    return grant;
  }

  /**
   * The wait after a bounce: Appendix A.3's random backoff, but at most λ. A bouncer is also the
   * frozen word's watchdog (CounterReset.noteBounce), which zeroes it only after a silence of a
   * stall threshold (at least 2λ) watched without a gap longer than that; a lone bouncer whose
   * backoff outgrew the threshold restarted its watch on every bounce, so a word frozen by a
   * resetter that died stayed frozen for good (swarm seeds 80 and 119 with counterLimit=8).
   */
  private bounceDelayNs(lock: LockId): number {
    const delayNs = this.backoff.nextDelayNs(lock);
    return this.options.mutantUnclampedBounceBackoff ? delayNs : Math.min(delayNs, this.options.leaseNs);
  }

  /** The acquiring FAA (Algorithm 1). A frozen word bounces the request: withdraw, watch, back off. */
  private async draw(access: LockWordAccess, lock: LockId, kind: RequestKind, slots: number): Promise<DrawnTicket | 'bounced'> {
    const { layout } = this.context;
    const field = maxField(bakeryOf(kind));
    const issueNs = this.context.nowNs();
    const word = await access.faa(layout.increment(field, slots));
    const doneNs = this.context.nowNs();
    const t = layout.decode(word);
    if (layout.frozen(t)) {
      this.pacing.attempt(false);
      await this.reset.withdraw(access, word, field, slots);
      await this.reset.noteBounce(access, t, issueNs, doneNs);
      return 'bounced';
    }
    this.pacing.attempt(isGranted(kind, t, t));
    const resetter = crossesLimit(kind, t, slots, layout.counterLimit, this.options.paperLiteralResetterTest);
    const resetFrom = resetter ? layout.encode(drainedState(kind, t, slots)) : undefined;
    // This ticket froze the word: its holder must reset the counters (DSLR §5.3); the reset lasts until the word is zeroed.
    if (resetter) this.ports.phases?.resetBegin(lock);
    return { lock, kind, slots, access, word, t, issueNs, doneNs, resetFrom };
  }

  /**
   * Waits for the ticket's turn while the caller waits. At the caller's deadline or abort the
   * caller gets its error at once, but the ticket cannot be withdrawn (later tickets count it), so
   * the wait goes on detached and releases the lock as soon as it is granted (A16).
   */
  private waitAttached(drawn: DrawnTicket, deadline: AcquireDeadline, signal: AbortSignal | undefined, op: AcquireSpan): Promise<WaitOutcome> {
    return new Promise<WaitOutcome>((resolve, reject) => {
      const attachment = new WaitAttachment(this.ports.clock, deadline, signal, reject);
      this.awaitTurn(drawn, attachment, op).then(
        (outcome) => {
          if (attachment.attached) resolve(outcome);
          else if (outcome.kind === 'granted') this.releaseDetached(drawn, outcome.leaseStartNs, outcome.seen, outcome.seenWord);
        },
        (error: unknown) => {
          if (attachment.attached) reject(error);
        },
      );
    });
  }

  private releaseDetached(drawn: DrawnTicket, leaseStartNs: number, seen: Counters, seenWord: bigint): void {
    const grant = this.grantFor(drawn, leaseStartNs, seen, seenWord);
    // Nobody awaits this release; a fabric error here leaves a ticket that waiters will skip.
    this.release(grant).catch(() => undefined);
  }

  /** Dynamic-interval polling with stall detection and skipping (Algorithm 2, §6). */
  private async awaitTurn(drawn: DrawnTicket, attachment: WaitAttachment, op: AcquireSpan): Promise<WaitOutcome> {
    const { layout } = this.context;
    const { options } = this;
    const { t, kind, slots } = drawn;
    const schedule = this.pacing.begin();
    let sightings: Sightings = { last: t, maxFloor: withAdded(t, maxField(bakeryOf(kind)), slots) };
    // Stall timers run from the completion of the observation that first showed the counters (§6.3).
    let stillSinceNs = drawn.doneNs;
    let nxSinceNs = drawn.doneNs;
    let nsSinceNs = drawn.doneNs;
    // The lease starts at the issue of the last observation that did not show the grant.
    let previousIssueNs = drawn.issueNs;
    for (;;) {
      await attachment.sleep(schedule.nextDelayNs(ticketsAhead(t, sightings.last)));
      if (!attachment.attached && options.paperLiteralAbandonTicket) return { kind: 'abandoned' };
      const issueNs = this.context.nowNs();
      const word = await drawn.access.read();
      const doneNs = this.context.nowNs();
      if (attachment.attached) op.retries++;
      const v = layout.decode(word);
      // Blind for longer than the shortest skip (a pause): the turn may have come, been skipped and
      // the word reset and regrown to counters no comparison can tell from this generation's (ABA
      // across generations; with small counter limits, or the update layout's 512, a pause spans
      // generations). The ticket is given up without a release; waiters behind skip it if it is
      // still there.
      if (!options.mutantNoBlindCheck && doneNs - previousIssueNs > BLIND_MARGIN * this.context.stallThresholdNs(1)) {
        this.pacing.attempt(false);
        return { kind: 'invalidated', why: 'blind' };
      }
      const why = invalidation(kind, t, v, sightings, this.rules);
      if (why !== undefined) {
        this.pacing.attempt(false);
        return { kind: 'invalidated', why };
      }
      if (isGranted(kind, t, v)) {
        this.pacing.attempt(true);
        return { kind: 'granted', leaseStartNs: previousIssueNs, seen: v, seenWord: word };
      }
      this.pacing.attempt(false);
      previousIssueNs = issueNs;
      const last = sightings.last;
      sightings = { last: v, maxFloor: layout.frozen(v) ? sightings.maxFloor : v };
      if (v.nX !== last.nX) nxSinceNs = doneNs;
      if (v.nS !== last.nS) nsSinceNs = doneNs;
      if (!sameNow(v, last)) stillSinceNs = doneNs;
      // A6: the paper's "nX or nS have not changed" read as either counter standing still.
      const stalledSinceNs = options.paperLiteralStallOnEither ? Math.min(nxSinceNs, nsSinceNs) : stillSinceNs;
      if (issueNs - stalledSinceNs <= this.context.stallThresholdNs(ticketsAhead(t, v))) continue;
      if (await this.skip(drawn, word, v)) return { kind: 'skipped' };
    }
  }

  /**
   * Skips the stalled tickets ahead and consumes this one (§6.4): one CAS from the observed word to
   * the skip value. The resetter goes on to zero the word; otherwise the word is zeroed only when
   * the skip left it frozen and fully drained (A4 fix), or, paper-literally, whenever it is frozen.
   */
  private async skip(drawn: DrawnTicket, word: bigint, v: Counters): Promise<boolean> {
    const { layout } = this.context;
    const next = skipValue(drawn.kind, drawn.t, drawn.slots, v, this.options.paperLiteralSharedSkip);
    const nextWord = layout.encode(next);
    if ((await drawn.access.cas(word, nextWord)) !== word) return false;
    this.context.recordReset(drawn.lock, 'skip');
    if (drawn.resetFrom !== undefined) {
      await this.reset.drainAndZero(drawn.access, drawn.resetFrom);
    } else if (layout.frozen(next) && (this.options.paperLiteralZeroAfterSkip || drained(next))) {
      if ((await drawn.access.cas(nextWord, 0n)) === nextWord) {
        this.context.recordReset(drawn.lock, this.options.paperLiteralZeroAfterSkip ? 'paper-zero-after-skip' : 'skip-drained-zero');
      }
    }
    return true;
  }
}
