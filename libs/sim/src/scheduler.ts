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

interface Event {
  readonly timeNs: number;
  readonly seq: number;
  readonly fn: () => void;
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

  private heap: Event[] = [];
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
    return this.heap.length;
  }

  at(timeNs: number, fn: () => void): void {
    this.push({ timeNs: Math.max(timeNs, this.now), seq: this.seq++, fn });
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
          const next = this.heap[0];
          if (!next) {
            // Code started just before run() may not have reached its first scheduling call yet.
            if (idleChecked) return resolve({ events: count, endNs: this.now, reason: 'idle' });
            return this.afterDrain(() => step(true), false);
          }
          if (limits.untilNs !== undefined && next.timeNs > limits.untilNs) {
            this.now = limits.untilNs;
            return resolve({ events: count, endNs: this.now, reason: 'until' });
          }
          if (limits.stop?.()) return resolve({ events: count, endNs: this.now, reason: 'stopped' });
          if (limits.maxEvents !== undefined && count >= limits.maxEvents) return resolve({ events: count, endNs: this.now, reason: 'max-events' });
          const windowEndNs = next.timeNs + this.lookaheadNs;
          let event: Event | undefined = next;
          do {
            this.pop();
            this.now = event.timeNs;
            count++;
            this.executed++;
            event.fn();
            event = this.heap[0];
          } while (event && event.timeNs < windowEndNs && (limits.untilNs === undefined || event.timeNs <= limits.untilNs));
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

  private push(event: Event): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(event, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = event;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, last)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }
}

function before(a: Event, b: Event): boolean {
  return a.timeNs < b.timeNs || (a.timeNs === b.timeNs && a.seq < b.seq);
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
