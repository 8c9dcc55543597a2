import type { HistoryEvent } from '@lockfabric/check';
import { LOCK_PHASES } from '@lockfabric/ports';
import type { Clock, Grant, LockClient, LockMode, LockPhase, PhaseMarks } from '@lockfabric/ports';

/** The operations a breakdown is kept for: ShiftLock Table 3's columns "Acq (W)", "Acq (R)" and "Rel". */
export type TimedOperation = 'acquire-exclusive' | 'acquire-shared' | 'release';

/** Time before a protocol's first mark (and all of it, for a protocol that marks nothing). */
export type PhaseKey = LockPhase | 'unmarked';

export interface PhaseTotals {
  /** Completed operations of this kind that were timed. */
  operations: number;
  /** Nanoseconds spent in each phase, summed over those operations. */
  readonly ns: Partial<Record<PhaseKey, number>>;
}

/**
 * Times the phases protocols mark (see `PhaseMarks`) with the client's own clock, per kind of
 * operation, summed over every client of a process. The protocol only names phase boundaries.
 */
/** Lock resets the clients carried out (DecLock Fig. 16): how many, and how long each took. */
export interface ResetTotals {
  count: number;
  totalNs: number;
  maxNs: number;
  /** Resets a client began that another client finished. */
  finishedElsewhere: number;
}

/**
 * One client's operation timing without a wrapper of its own: `begin` when an acquire or release
 * is invoked (returns the operation's number), `completed` or `failed` when it settles. Another
 * wrapper that already reacts to the call's promise (VerbAccounting.wrapClient) drives these, so
 * the two cost one promise per operation between them instead of two.
 */
export interface OperationTimingHooks {
  begin(): number;
  completed(id: number, kind: TimedOperation): void;
  failed(id: number): void;
}

/** `unmarked` first, then the protocols' phases: a phase's index into a client's typed arrays. */
const PHASE_KEYS: readonly PhaseKey[] = ['unmarked', ...LOCK_PHASES];
const UNMARKED = 0;
const PHASE_INDEX = Object.fromEntries(PHASE_KEYS.map((key, i) => [key, i])) as Readonly<Record<PhaseKey, number>>;

export class PhaseTiming {
  readonly resets: ResetTotals = { count: 0, totalNs: 0, maxNs: 0, finishedElsewhere: 0 };

  /** `mutantLoseLastPhase` (test-only): the phase open when an operation ends is not counted. */
  constructor(private readonly options: { readonly mutantLoseLastPhase?: boolean } = {}) {}

  readonly totals: Record<TimedOperation, PhaseTotals> = {
    'acquire-exclusive': { operations: 0, ns: {} },
    'acquire-shared': { operations: 0, ns: {} },
    release: { operations: 0, ns: {} },
  };

  /**
   * The marks of one client, timed by `clock`, and its client wrapped to open and close each operation.
   * A client has one operation open at a time, so its per-operation state lives in this closure and
   * typed arrays made once: an operation allocates nothing here but its two reactions.
   */
  forClient<G extends Grant>(clock: Clock): { marks: PhaseMarks; wrap: (inner: LockClient<G>) => LockClient<G>; hooks: OperationTimingHooks } {
    // The open operation: its number (0 = none; a later one supersedes it), its phase and since when.
    let openId = 0;
    let lastId = 0;
    let phase = UNMARKED;
    let sinceNs = 0;
    // Its time per phase, and the phases in the order they were first closed (the totals' key order).
    const ns = new Float64Array(PHASE_KEYS.length);
    const order = new Uint8Array(PHASE_KEYS.length);
    let phasesSeen = 0;
    let seenMask = 0;
    const close = () => {
      if (openId === 0) return;
      const now = clock.nowNs();
      // Unmarked time is kept only when there is some: a protocol that marks at once has none.
      if (phase !== UNMARKED || now > sinceNs) {
        if ((seenMask & (1 << phase)) === 0) {
          seenMask |= 1 << phase;
          order[phasesSeen++] = phase;
          ns[phase] = now - sinceNs;
        } else ns[phase] = (ns[phase] as number) + (now - sinceNs);
      }
      sinceNs = now;
    };
    const resetting = new Map<number, number>();
    const marks: PhaseMarks = {
      resetBegin: (lock) => {
        if (!resetting.has(lock)) resetting.set(lock, clock.nowNs());
      },
      resetEnd: (lock, outcome) => {
        const since = resetting.get(lock);
        if (since === undefined) return;
        resetting.delete(lock);
        if (outcome === 'other') {
          this.resets.finishedElsewhere++;
          return;
        }
        const elapsed = clock.nowNs() - since;
        this.resets.count++;
        this.resets.totalNs += elapsed;
        this.resets.maxNs = Math.max(this.resets.maxNs, elapsed);
      },
      enter: (next) => {
        // A mark outside an operation (a release finishing after its caller gave up) is not timed.
        // Re-entering the open phase (a retry loop marks it every round) changes no total.
        const index = PHASE_INDEX[next];
        if (openId === 0 || phase === index) return;
        close();
        phase = index;
      },
    };
    const begin = (): number => {
      openId = ++lastId;
      phase = UNMARKED;
      sinceNs = clock.nowNs();
      phasesSeen = 0;
      seenMask = 0;
      return openId;
    };
    const hooks: OperationTimingHooks = {
      begin,
      completed: (id, kind) => {
        if (openId !== id) return;
        if (!this.options.mutantLoseLastPhase) close();
        this.add(kind, ns, order, phasesSeen);
        openId = 0;
      },
      failed: (id) => {
        if (openId === id) openId = 0;
      },
    };
    // A `.then` on the call's own promise, not an async function: the wrapper sits on every
    // acquire and release of a live run, and an async one cost each of them a second promise and
    // an async frame to resume (wrapper-promises.test.ts counts the promises).
    const settle = <T>(id: number, kind: TimedOperation, result: Promise<T>): Promise<T> =>
      result.then(
        (value) => {
          hooks.completed(id, kind);
          return value;
        },
        (error: unknown) => {
          hooks.failed(id);
          throw error;
        },
      );
    const failed = (id: number, error: unknown): Promise<never> => {
      hooks.failed(id);
      return Promise.reject(error);
    };
    const wrap = (inner: LockClient<G>): LockClient<G> => ({
      acquire: (lock, mode: LockMode, options) => {
        const id = begin();
        let result: Promise<G>;
        try {
          result = inner.acquire(lock, mode, options);
        } catch (error) {
          return failed(id, error);
        }
        return settle(id, mode === 'shared' ? 'acquire-shared' : 'acquire-exclusive', result);
      },
      release: (grant) => {
        const id = begin();
        let result: Promise<void>;
        try {
          result = inner.release(grant);
        } catch (error) {
          return failed(id, error);
        }
        return settle(id, 'release', result);
      },
    });
    return { marks, wrap, hooks };
  }

  /** Mean microseconds per operation of each kind and phase (a phase an operation skipped counts as 0, as in Table 3). */
  meansUs(): PhaseBreakdown {
    const out: Partial<Record<TimedOperation, PhaseMeans>> = {};
    for (const [kind, totals] of Object.entries(this.totals) as [TimedOperation, PhaseTotals][]) {
      if (totals.operations === 0) continue;
      const us: Partial<Record<PhaseKey, number>> = {};
      for (const [phase, ns] of Object.entries(totals.ns) as [PhaseKey, number][]) us[phase] = ns / totals.operations / 1000;
      out[kind] = { operations: totals.operations, us };
    }
    return out;
  }

  /** Adds one operation's time per phase, phase by phase in the order they were first closed. */
  private add(kind: TimedOperation, ns: Float64Array, order: Uint8Array, phases: number): void {
    const totals = this.totals[kind];
    totals.operations++;
    for (let i = 0; i < phases; i++) {
      const index = order[i] as number;
      const key = PHASE_KEYS[index] as PhaseKey;
      totals.ns[key] = (totals.ns[key] ?? 0) + (ns[index] as number);
    }
  }
}

/**
 * How far the timed phases are from the operations' durations in a history, in ns per operation
 * kind: 0 when every nanosecond of every completed acquire and release was counted in exactly one
 * phase. Only for runs whose clients wrap nothing around the protocol that takes time.
 */
export function phaseCoverageGapNs(events: readonly HistoryEvent[], timing: PhaseTiming): Record<TimedOperation, number> {
  const fromHistory: Record<TimedOperation, number> = { 'acquire-exclusive': 0, 'acquire-shared': 0, release: 0 };
  const invoked = new Map<string, number>();
  for (const e of events) {
    const key = `${e.client}/${e.op}`;
    if (e.phase === 'invoke') invoked.set(key, e.timeNs);
    else if (e.phase === 'ok') {
      const start = invoked.get(key);
      if (start === undefined) continue;
      const kind: TimedOperation = e.op === 'release' ? 'release' : e.mode === 'shared' ? 'acquire-shared' : 'acquire-exclusive';
      fromHistory[kind] += e.timeNs - start;
    }
  }
  const gap = { ...fromHistory };
  for (const kind of Object.keys(gap) as TimedOperation[]) {
    const timed = Object.values(timing.totals[kind].ns).reduce((a, b) => a + (b ?? 0), 0);
    // Rounded to whole ns: virtual times can be fractional and their sums differ in the last bits.
    gap[kind] = Math.round(Math.abs(fromHistory[kind] - timed));
  }
  return gap;
}

export interface PhaseMeans {
  readonly operations: number;
  /** Mean µs per operation spent in each phase that occurred at least once. */
  readonly us: Partial<Record<PhaseKey, number>>;
}

export type PhaseBreakdown = Partial<Record<TimedOperation, PhaseMeans>>;
