import { NS_PER_MS } from '@lockfabric/ports';
import { EpochSource } from './epoch-source.js';
import { FailureDetector } from './failure-detector.js';
import type { ExpectedMember, FailureDetectorOptions, HeartbeatInput, HeartbeatOutcome, MemberRecord, RecalledMember, Transition } from './failure-detector.js';

export interface MembershipView {
  readonly epoch: bigint;
  readonly timeNs: number;
  readonly members: readonly MemberRecord[];
}

/** The newest view a participant kept from an earlier life of the coordinator (see `Membership.recall`). */
export interface RecalledView {
  readonly epoch: bigint;
  readonly members: readonly RecalledMember[];
}

/** `change`: the live set changed (new epoch); `announce`: the current view again, for late subscribers. */
export type PublishReason = 'change' | 'announce';

export interface MembershipOptions extends FailureDetectorOptions {
  /**
   * After a (re)start, no view is published for this long: a coordinator that just started has
   * heard no heartbeats yet, and an empty view would tell every node that the cluster died.
   * Default: the suspicion timeout, after which every live member has heartbeated.
   */
  readonly warmupMs?: number;
  /** The current view is published again this often without a change; default 1 s. */
  readonly announceIntervalMs?: number;
  /** Test only: a recalled view is ignored, as before recall existed (a member that died unheard is never declared dead). */
  readonly mutantIgnoreRecall?: boolean;
  /**
   * The members the deployment's configuration names (FailureDetector.expect): watched from the
   * start, so one never heard within a timeout is declared dead like a silent member.
   */
  readonly expected?: readonly ExpectedMember[];
  /** Test only: `expected` is ignored, as before it existed (a member that never joined this life or a recalled view is never declared dead). */
  readonly mutantIgnoreExpectedMembers?: boolean;
}

export const DEFAULT_ANNOUNCE_INTERVAL_MS = 1_000;

/**
 * The coordinator's membership: the failure detector, the epochs, and when views go out. Pure
 * over injected time like the detector; `publish` is called synchronously with each view.
 */
export class Membership {
  readonly detector: FailureDetector;
  private readonly startNs: number;
  private readonly ignoreRecall: boolean;
  private recalled = false;
  private readonly warmupEndNs: number;
  private readonly announceIntervalNs: number;
  private published: MembershipView | undefined;
  private publishedVersion = -1;
  private lastPublishNs = Number.NEGATIVE_INFINITY;

  constructor(
    options: MembershipOptions,
    startNs: number,
    private readonly publish: (view: MembershipView, reason: PublishReason) => void,
    readonly epochs: EpochSource = new EpochSource(),
  ) {
    this.detector = new FailureDetector(options);
    this.startNs = startNs;
    this.ignoreRecall = options.mutantIgnoreRecall === true;
    this.warmupEndNs = startNs + (options.warmupMs ?? this.detector.suspectAfterMs) * NS_PER_MS;
    this.announceIntervalNs = (options.announceIntervalMs ?? DEFAULT_ANNOUNCE_INTERVAL_MS) * NS_PER_MS;
    if (options.expected && options.mutantIgnoreExpectedMembers !== true) this.detector.expect(options.expected, startNs);
  }

  /** The last view published; undefined during warm-up. */
  get view(): MembershipView | undefined {
    return this.published;
  }

  heartbeat(hb: HeartbeatInput, nowNs: number): HeartbeatOutcome {
    const outcome = this.detector.heartbeat(hb, nowNs);
    this.publishIfChanged(nowNs);
    return outcome;
  }

  /** Runs the detector's timeouts, ends the warm-up, re-announces; returns the detector's transitions. */
  tick(nowNs: number): Transition[] {
    const transitions = this.detector.tick(nowNs);
    if (!this.publishIfChanged(nowNs) && this.published && nowNs - this.lastPublishNs >= this.announceIntervalNs) {
      this.emit({ epoch: this.published.epoch, timeNs: nowNs, members: this.detector.members() }, 'announce', nowNs);
    }
    return transitions;
  }

  /** Declares a member dead at once (see FailureDetector.declareDead); the view saying so goes out before this returns. */
  declareDead(role: string, id: string, nowNs: number): Transition | undefined {
    const transition = this.detector.declareDead(role, id, nowNs);
    if (transition) this.publishIfChanged(nowNs);
    return transition;
  }

  /**
   * What an earlier life of the coordinator published, as a participant kept it: the epochs go on
   * above it, and its members are watched from this life's start (FailureDetector.recall), so one
   * that died while no coordinator ran is declared dead one timeout after the start and its
   * recovery runs. One recall per life: the first answer counts. Returns the members taken.
   */
  recall(view: RecalledView, nowNs: number): number {
    if (this.ignoreRecall || this.recalled) return 0;
    this.recalled = true;
    this.epochs.observe(view.epoch);
    const taken = this.detector.recall(view.members, this.startNs);
    this.publishIfChanged(nowNs);
    return taken;
  }

  /** A view another coordinator (or an earlier life of this one) published. */
  observeEpoch(epoch: bigint): void {
    this.epochs.observe(epoch);
  }

  /** Every member as of now, under the epoch of the last published view (0 during warm-up). */
  snapshot(nowNs: number): MembershipView {
    return { epoch: this.published?.epoch ?? 0n, timeNs: nowNs, members: this.detector.members() };
  }

  private publishIfChanged(nowNs: number): boolean {
    if (nowNs < this.warmupEndNs) return false;
    if (this.detector.liveSetVersion === this.publishedVersion) return false;
    this.publishedVersion = this.detector.liveSetVersion;
    this.emit({ epoch: this.epochs.next(nowNs), timeNs: nowNs, members: this.detector.members() }, 'change', nowNs);
    return true;
  }

  private emit(view: MembershipView, reason: PublishReason, nowNs: number): void {
    this.published = view;
    this.lastPublishNs = nowNs;
    this.publish(view, reason);
  }
}
