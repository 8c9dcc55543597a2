import { leap } from './lock-entry.js';

export type WatchVerdict =
  /** RelCnt leapt: the lock was reset since the last look; the attempt must restart from scratch. */
  | 'leap'
  /** RelCnt moved: the lock is making progress; a new observation window starts. */
  | 'moved'
  /** RelCnt is where it was, not yet for long. */
  | 'steady'
  /** RelCnt has not moved for the whole detection window: presume a failure (spec §4.2). */
  | 'stalled';

export interface WatchTiming {
  /** 3 × T_lease × (1+δ): how long RelCnt may stand still before a failure is presumed. */
  readonly stallNs: number;
  /** T_lease: consecutive looks further apart than this mean the waiter itself was descheduled. */
  readonly gapNs: number;
}

/**
 * One waiter's view of RelCnt for failure detection. Each new value is compared with the last value
 * this waiter saw (A15). If the waiter's own looks are more than T_lease apart, it was descheduled
 * and the window restarts instead of concluding anything (spec §4.2, [choice]).
 */
export class RelCntWatch {
  private lastValue: bigint;
  private windowStartNs: number;
  private lastLookNs: number;

  constructor(
    relCnt: bigint,
    nowNs: number,
    private readonly timing: WatchTiming,
  ) {
    this.lastValue = relCnt;
    this.windowStartNs = nowNs;
    this.lastLookNs = nowNs;
  }

  get last(): bigint {
    return this.lastValue;
  }

  observe(relCnt: bigint, nowNs: number): WatchVerdict {
    if (leap(this.lastValue, relCnt)) return 'leap';
    if (relCnt !== this.lastValue) {
      this.lastValue = relCnt;
      this.restart(nowNs);
      return 'moved';
    }
    if (nowNs - this.lastLookNs > this.timing.gapNs) this.windowStartNs = nowNs;
    this.lastLookNs = nowNs;
    return nowNs - this.windowStartNs >= this.timing.stallNs ? 'stalled' : 'steady';
  }

  /** Starts a fresh window at the current value (after a recovery attempt saw progress). */
  restart(nowNs: number): void {
    this.windowStartNs = nowNs;
    this.lastLookNs = nowNs;
  }
}
