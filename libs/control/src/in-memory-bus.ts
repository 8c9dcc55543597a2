import { NS_PER_MS } from '@lockfabric/ports';
import type { BusMessage, BusStatus, ControlBus, Unsubscribe } from './bus.js';
import { deliverSafely, subjectTokensMatch } from './bus.js';
import { ControlBusClosedError, ControlNoRespondersError, ControlRequestTimeoutError, ControlSubjectError } from './errors.js';

/**
 * The time source the in-memory bus delivers through: libs/sim's `Scheduler` (virtual under
 * `sim`, the event loop under `embedded`) satisfies it as it is.
 */
export interface BusScheduler {
  nowNs(): number;
  /** Runs `fn` at absolute time `timeNs` (never before now). */
  at(timeNs: number, fn: () => void): void;
}

export interface InMemoryControlBusOptions {
  /** One-way delivery delay of every message (a NATS hop); default 20 µs. */
  readonly latencyNs?: number;
}

interface Subscription {
  readonly pattern: string;
  /** The pattern split at its dots, once. */
  readonly tokens: readonly string[];
  readonly handler: (message: BusMessage) => void;
  readonly owner: string;
  active: boolean;
}

/**
 * A ControlBus in one process, delivering every message `latencyNs` after it was sent, through
 * the scheduler: the sim's virtual clock orders control traffic with everything else, so a run
 * stays one deterministic schedule. Message order between one sender and one subscription is
 * kept (equal delays, FIFO scheduler ties), as NATS keeps it per connection.
 *
 * Each party gets its own view (`connect(name)`); `cut(name)` drops everything to and from it
 * (a crashed process), and its subscriptions end with it.
 */
export class InMemoryControlBus {
  private readonly subscriptions = new Set<Subscription>();
  /**
   * The subscriptions each subject published since the set last changed reaches, in subscription
   * order: a swarm seed's heartbeats and calls go to a few subjects over and over, and matching
   * every pattern on every publish was a sixth of a FissLock seed's processor time.
   */
  private readonly targetsBySubject = new Map<string, readonly Subscription[]>();
  private readonly latencyNs: number;
  private readonly cutParties = new Set<string>();
  /** Parties paused (SIGSTOP) until a time: what reaches them meanwhile is handled when they wake. */
  private readonly heldUntil = new Map<string, number>();
  /** Messages published and delivered (per subscription), for tests and reports. */
  published = 0;
  delivered = 0;
  /** Pattern-against-subject comparisons made (each publish to a subject not seen since the last change of subscriptions makes one per subscription). */
  comparisons = 0;

  constructor(
    private readonly scheduler: BusScheduler,
    options: InMemoryControlBusOptions = {},
  ) {
    this.latencyNs = options.latencyNs ?? 20_000;
  }

  /** The bus as party `name` sees it. A name that was cut is live again from here on. */
  connect(name: string): ControlBus {
    this.cutParties.delete(name);
    return {
      publish: (subject, data) => this.publish(name, subject, data),
      subscribe: (pattern, handler) => this.subscribe(name, pattern, handler),
      request: (subject, data, options) => this.request(name, subject, data, options.timeoutMs),
      onStatus: (_listener: (status: BusStatus) => void): Unsubscribe => () => undefined,
    };
  }

  /**
   * Party `name` is paused until `untilNs` (a stopped process): messages for it that arrive
   * meanwhile are handled when it wakes, in arrival order; it answers requests only then.
   */
  hold(name: string, untilNs: number): void {
    this.heldUntil.set(name, Math.max(untilNs, this.heldUntil.get(name) ?? 0));
  }

  /** Party `name` is gone: its subscriptions end and what it sends from now on is dropped. */
  cut(name: string): void {
    this.cutParties.add(name);
    for (const s of this.subscriptions) if (s.owner === name) this.drop(s);
  }

  private publish(owner: string, subject: string, data: Uint8Array, respond?: (data: Uint8Array) => void): number {
    validate(subject, false);
    if (this.cutParties.has(owner)) return 0;
    this.published++;
    const targets = this.targetsOf(subject);
    const at = this.scheduler.nowNs() + this.latencyNs;
    // Copied once: a sender reusing its buffer must not change what the receivers read.
    const message: BusMessage = { subject, data: data.slice(), ...(respond ? { respond } : {}) };
    for (const target of targets) {
      const deliver = (): void => {
        if (!target.active || this.cutParties.has(target.owner)) return;
        const wakeNs = this.heldUntil.get(target.owner) ?? 0;
        if (wakeNs > this.scheduler.nowNs()) return this.scheduler.at(wakeNs, deliver);
        this.delivered++;
        deliverSafely(target.handler, message);
      };
      this.scheduler.at(at, deliver);
    }
    return targets.length;
  }

  private targetsOf(subject: string): readonly Subscription[] {
    const known = this.targetsBySubject.get(subject);
    if (known) return known;
    const tokens = subject.split('.');
    const targets: Subscription[] = [];
    for (const s of this.subscriptions) {
      this.comparisons++;
      if (subjectTokensMatch(s.tokens, tokens)) targets.push(s);
    }
    // Bounded: subjects are few per run, but a caller could make them up without end.
    if (this.targetsBySubject.size >= MAX_CACHED_SUBJECTS) this.targetsBySubject.clear();
    this.targetsBySubject.set(subject, targets);
    return targets;
  }

  private subscribe(owner: string, pattern: string, handler: (message: BusMessage) => void): Unsubscribe {
    validate(pattern, true);
    if (this.cutParties.has(owner)) return () => undefined;
    const subscription: Subscription = { pattern, tokens: pattern.split('.'), handler, owner, active: true };
    this.subscriptions.add(subscription);
    this.targetsBySubject.clear();
    return () => this.drop(subscription);
  }

  private drop(subscription: Subscription): void {
    subscription.active = false;
    if (this.subscriptions.delete(subscription)) this.targetsBySubject.clear();
  }

  private request(owner: string, subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      if (this.cutParties.has(owner)) return reject(new ControlBusClosedError(subject));
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        fn();
      };
      const respond = (reply: Uint8Array): void => {
        const copy = reply.slice();
        this.scheduler.at(this.scheduler.nowNs() + this.latencyNs, () => {
          if (this.cutParties.has(owner)) return;
          settle(() => resolve(copy));
        });
      };
      const listeners = this.publish(owner, subject, data, respond);
      // NATS answers "no responders" at once (one round trip), not after the timeout.
      if (listeners === 0) {
        this.scheduler.at(this.scheduler.nowNs() + 2 * this.latencyNs, () => settle(() => reject(new ControlNoRespondersError(subject))));
        return;
      }
      this.scheduler.at(this.scheduler.nowNs() + timeoutMs * NS_PER_MS, () => settle(() => reject(new ControlRequestTimeoutError(subject, timeoutMs))));
    });
  }
}

const MAX_CACHED_SUBJECTS = 4_096;

function validate(subject: string, pattern: boolean): void {
  const tokens = subject.split('.');
  if (tokens.some((t) => t.length === 0)) throw new ControlSubjectError(subject, 'empty token');
  if (!pattern && tokens.some((t) => t === '*' || t === '>')) throw new ControlSubjectError(subject, 'wildcards only in subscriptions');
  if (pattern && tokens.slice(0, -1).includes('>')) throw new ControlSubjectError(subject, "'>' must be the last token");
}
