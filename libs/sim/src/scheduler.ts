/**
 * The time source of an in-memory cluster. `VirtualScheduler` (substrate `sim`) orders every event
 * by (virtual time, sequence number) and runs one at a time; `RealTimeScheduler` (substrate
 * `embedded`) maps the same calls onto the Node.js event loop.
 */
export interface Scheduler {
  readonly kind: 'virtual' | 'real';
  nowNs(): number;
  /** Runs `fn` at absolute time `timeNs` (never before now). */
  at(timeNs: number, fn: () => void): void;
}

export interface VirtualRunLimits {
  /** Stop before the first event later than this virtual time. */
  readonly untilNs?: number;
  /** Stop when this returns true (checked between events). */
  readonly stop?: () => boolean;
  readonly maxEvents?: number;
}

export interface VirtualRunOutcome {
  readonly events: number;
  readonly endNs: number;
  readonly reason: 'idle' | 'until' | 'stopped' | 'max-events';
}

/**
 * Discrete-event scheduler over a binary heap. Deterministic: same calls, same order.
 *
 * `lookaheadNs` trades timing precision for speed: events closer than that to the first event of a
 * window run back to back before promise continuations get their turn. A continuation that runs
 * late is still a valid schedule of an asynchronous system (it just reads a later time), so
 * safety results are unaffected; latencies may be overstated by up to `lookaheadNs`.
 */
export class VirtualScheduler implements Scheduler {
  readonly kind = 'virtual';

  /**
   * @param macrotaskEvery events between full event-loop turns; tests pass 1 to build the engine
   * that pays a macrotask per window (the regression the turn-count test must catch).
   */
  constructor(
    private readonly lookaheadNs = 50,
    private readonly macrotaskEvery = MACROTASK_EVERY_EVENTS,
  ) {}

  /**
   * The event queue: a binary heap kept in three parallel arrays (time, sequence number, callback)
   * rather than one object per event, so scheduling allocates nothing but the callback and the
   * heap moves numbers. Same order as ever: (time, sequence number).
   */
  private times = new Float64Array(1_024);
  private seqs = new Float64Array(1_024);
  private readonly fns: ((() => void) | undefined)[] = [];
  private size = 0;
  private seq = 0;
  private now = 0;
  private executed = 0;

  nowNs(): number {
    return this.now;
  }

  get eventsExecuted(): number {
    return this.executed;
  }

  get pending(): number {
    return this.size;
  }

  at(timeNs: number, fn: () => void): void {
    this.push(Math.max(timeNs, this.now), fn);
  }

  /** Macrotask turns `run` has yielded (see {@link MACROTASK_EVERY_EVENTS}); the rest drain by microtask. */
  get macrotaskTurns(): number {
    return this.turns;
  }

  private turns = 0;

  /**
   * Runs events in order. After each look-ahead window every promise continuation the window woke
   * runs — and schedules what it will — before the next event is taken (see `afterDrain`). Only
   * one window in {@link MACROTASK_EVERY_EVENTS} events pays for a full event-loop turn, so timers
   * and I/O of the host (progress reports, test runners) still get their turn.
   */
  run(limits: VirtualRunLimits = {}): Promise<VirtualRunOutcome> {
    return new Promise((resolve, reject) => {
      let count = 0;
      let nextTurnAt = this.macrotaskEvery;
      // `idleChecked`: the heap was empty once and continuations have drained since.
      const step = (idleChecked: boolean): void => {
        try {
          if (this.size === 0) {
            // Code started just before run() may not have reached its first scheduling call yet.
            if (idleChecked) return resolve({ events: count, endNs: this.now, reason: 'idle' });
            return this.afterDrain(() => step(true), false);
          }
          const firstNs = this.times[0]!;
          if (limits.untilNs !== undefined && firstNs > limits.untilNs) {
            this.now = limits.untilNs;
            return resolve({ events: count, endNs: this.now, reason: 'until' });
          }
          if (limits.stop?.()) return resolve({ events: count, endNs: this.now, reason: 'stopped' });
          if (limits.maxEvents !== undefined && count >= limits.maxEvents) return resolve({ events: count, endNs: this.now, reason: 'max-events' });
          const windowEndNs = firstNs + this.lookaheadNs;
          const untilNs = limits.untilNs;
          do {
            this.now = this.times[0]!;
            const fn = this.pop();
            count++;
            this.executed++;
            fn();
          } while (this.size > 0 && this.times[0]! < windowEndNs && (untilNs === undefined || this.times[0]! <= untilNs));
          const turn = count >= nextTurnAt;
          if (turn) nextTurnAt = count + this.macrotaskEvery;
          if (turn) this.afterDrain(again, true);
          else RESOLVED.then(drainThenAgain);
        } catch (error) {
          reject(error);
        }
      };
      // Made once per run, not per window: the drain path allocates only the reaction's promise.
      const again = (): void => step(false);
      const drainThenAgain = (): void => process.nextTick(again);
      step(false);
    });
  }

  /**
   * Calls `fn` once the microtask queue is empty, i.e. after every continuation woken so far and
   * every continuation those woke. A reaction queued now runs after the ones already queued; the
   * tick it queues runs only when Node's microtask drain (`runMicrotasks`) has found the queue
   * empty — the guarantee a macrotask turn gives, without the event-loop turn (and its poll for
   * I/O) that cost most of the simulator's time when every window paid for one. Deterministic:
   * both queues are FIFO and fed only by the simulation.
   */
  private afterDrain(fn: () => void, macrotask: boolean): void {
    if (macrotask) {
      this.turns++;
      setImmediate(fn);
    } else {
      // A reaction on a settled promise: queued like queueMicrotask, without its AsyncResource.
      RESOLVED.then(() => process.nextTick(fn));
    }
  }

  private push(timeNs: number, fn: () => void): void {
    if (this.size === this.times.length) this.grow();
    const times = this.times;
    const seqs = this.seqs;
    const fns = this.fns;
    const seq = this.seq++;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const parentNs = times[parent]!;
      if (!(timeNs < parentNs || (timeNs === parentNs && seq < seqs[parent]!))) break;
      times[i] = parentNs;
      seqs[i] = seqs[parent]!;
      fns[i] = fns[parent];
      i = parent;
    }
    times[i] = timeNs;
    seqs[i] = seq;
    fns[i] = fn;
  }

  /** Removes the first event and returns its callback (the caller read its time first). */
  private pop(): () => void {
    const times = this.times;
    const seqs = this.seqs;
    const fns = this.fns;
    const first = fns[0]!;
    const n = --this.size;
    const lastNs = times[n]!;
    const lastSeq = seqs[n]!;
    const lastFn = fns[n];
    fns[n] = undefined;
    if (n === 0) return first;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && (times[right]! < times[left]! || (times[right] === times[left] && seqs[right]! < seqs[left]!)) ? right : left;
      const childNs = times[child]!;
      if (!(childNs < lastNs || (childNs === lastNs && seqs[child]! < lastSeq))) break;
      times[i] = childNs;
      seqs[i] = seqs[child]!;
      fns[i] = fns[child];
      i = child;
    }
    times[i] = lastNs;
    seqs[i] = lastSeq;
    fns[i] = lastFn;
    return first;
  }

  private grow(): void {
    const times = new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.times = times;
    const seqs = new Float64Array(this.seqs.length * 2);
    seqs.set(this.seqs);
    this.seqs = seqs;
  }
}

/**
 * Events between two full event-loop turns of `VirtualScheduler.run`. A count, never a time, so
 * where the turns fall is part of the deterministic schedule.
 */
export const MACROTASK_EVERY_EVENTS = 4_096;

const RESOLVED = Promise.resolve();

/** Real time on the Node.js event loop. Delays under a millisecond run on the next loop turn. */
export class RealTimeScheduler implements Scheduler {
  readonly kind = 'real';

  constructor(private readonly clock: { nowNs(): number }) {}

  nowNs(): number {
    return this.clock.nowNs();
  }

  at(timeNs: number, fn: () => void): void {
    const delayMs = (timeNs - this.clock.nowNs()) / 1e6;
    if (delayMs < 1) setImmediate(fn);
    else setTimeout(fn, delayMs);
  }
}
