import { LockAbortedError, LockTimeoutError } from '@lockfabric/ports';
import type { Clock, LocalMemory, LockId, LockMode, RemoteAddr } from '@lockfabric/ports';
import { NS_PER_MS, Stopper } from '@lockfabric/ports';
import type { StopSignal } from '@lockfabric/ports';

/**
 * An acquire's timeout and abort signal: `AcquireOptions`, or a client's own options whose signal
 * is a {@link Stopper}'s (a wrapping client that must end the inner acquire makes one per acquire).
 */
export interface DeadlineOptions {
  readonly timeoutMs?: number;
  readonly signal?: StopSignal;
}

/** The point after which an acquire gives up, and the checks every retry loop makes against it. */
export class AcquireDeadline {
  readonly atNs: number;

  constructor(
    private readonly clock: Clock,
    private readonly lock: LockId,
    private readonly mode: LockMode,
    private readonly options: DeadlineOptions = {},
  ) {
    const timeoutMs = options.timeoutMs;
    this.atNs = timeoutMs === undefined ? Infinity : clock.nowNs() + timeoutMs * NS_PER_MS;
  }

  /** Throws LockAbortedError or LockTimeoutError when the acquire must stop. */
  check(): void {
    if (this.options.signal?.aborted) throw new LockAbortedError(this.lock, abortReason(this.options.signal));
    if (this.clock.nowNs() >= this.atNs) throw new LockTimeoutError(this.lock, this.mode, this.options.timeoutMs ?? 0);
  }

  /** The caller's abort signal, if it gave one. */
  get signal(): StopSignal | undefined {
    return this.options.signal;
  }

  remainingNs(): number {
    return this.atNs - this.clock.nowNs();
  }

  /** Sleeps at most until the deadline, then checks it. */
  async pause(ns: number): Promise<void> {
    const wait = Math.max(0, Math.min(ns, this.remainingNs()));
    if (wait > 0) {
      try {
        await this.clock.sleep(wait, this.options.signal);
      } catch {
        // aborted: reported by check() below with the caller's reason
      }
    }
    this.check();
  }

  /**
   * One step of a poll loop on a local word, without the polls: waits while the word at `addr`
   * holds `value` — at most until the deadline, or until the caller's signal or `wake` aborts — and
   * returns at the poll (every `pollNs` from now) that would have seen the change, then checks the
   * deadline. The caller loads the word again afterwards, as after a pause.
   */
  async waitWhile(cpu: LocalMemory, addr: RemoteAddr, value: bigint, pollNs: number, wake?: StopSignal): Promise<void> {
    await waitWhileLocal(this.clock, cpu, [{ addr, value }], { untilNs: this.atNs, pollNs, signals: [this.options.signal, wake] });
    this.check();
  }

  /** {@link pause} repeated until `subscribe`'s wake-up, without the pauses that saw nothing (see waitForWake). */
  async pauseUntilWoken(subscribe: (wake: () => void) => () => void, pollNs: number): Promise<void> {
    await waitForWake(this.clock, subscribe, { untilNs: this.atNs, pollNs, signals: [this.options.signal] });
    this.check();
  }
}

/** A word of the own node's memory and the value a spin waits to see replaced. */
export interface LocalWord {
  readonly addr: RemoteAddr;
  readonly value: bigint;
}

export interface LocalWaitOptions {
  /** Clock time at which the wait ends anyway (default: never). */
  readonly untilNs?: number;
  /**
   * Poll period of the loop the wait stands for: a change (or an abort) is acted on at the first
   * poll after it, `pollNs`, `2·pollNs`, … from the start, as that loop would have; so timing is
   * the poll loop's and only the polls that saw nothing new are left out. Without it, at once.
   */
  readonly pollNs?: number;
  /** End the wait when any of these aborts. */
  readonly signals?: readonly (StopSignal | undefined)[];
}

const WAIT_OVER = 'local wait over';

/**
 * Waits while every word of `words` (in the own node's memory) holds its value: until a store
 * changes one, `untilNs` passes, or a signal aborts. A spin then costs one wake-up per change of
 * the words instead of one step per poll. Never throws for the deadline or an abort: the caller
 * decides, as after one pause of a poll loop.
 */
export function waitWhileLocal(clock: Clock, cpu: LocalMemory, words: readonly LocalWord[], options: LocalWaitOptions = {}): Promise<void> {
  return waitForWake(
    clock,
    (wake) => {
      const stop = new Stopper();
      for (const { addr, value } of words) void cpu.waitWhile(addr, value, stop).then(wake);
      return () => stop.stop(WAIT_OVER);
    },
    options,
  );
}

/**
 * The poll loop's pause without the polls, for any condition: `subscribe` arranges for `wake` to
 * be called when what the loop polls for may have changed (and returns how to cancel that). Ends
 * as {@link waitWhileLocal} does: on a wake-up, at the deadline or when a signal aborts, aligned
 * to the loop's polls when `pollNs` is given.
 */
export async function waitForWake(clock: Clock, subscribe: (wake: () => void) => () => void, options: LocalWaitOptions = {}): Promise<void> {
  const startNs = clock.nowNs();
  const untilNs = options.untilNs ?? Infinity;
  const signals = options.signals ?? [];
  if (signals.some((signal) => signal?.aborted) || startNs >= untilNs) return;
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  const stopTimer = new Stopper();
  let timedOut = false;
  const unsubscribe = subscribe(wake);
  for (const signal of signals) signal?.addEventListener('abort', wake, { once: true });
  if (Number.isFinite(untilNs)) {
    clock.sleep(untilNs - startNs, stopTimer).then(
      () => {
        timedOut = true;
        wake();
      },
      () => undefined,
    );
  }
  try {
    await woken;
  } finally {
    unsubscribe();
    stopTimer.stop(WAIT_OVER);
    for (const signal of signals) signal?.removeEventListener('abort', wake);
  }
  if (timedOut || options.pollNs === undefined) return;
  const polls = Math.max(1, Math.ceil((clock.nowNs() - startNs) / options.pollNs));
  const wakeNs = Math.min(startNs + polls * options.pollNs, untilNs);
  if (wakeNs > clock.nowNs()) await clock.sleep(wakeNs - clock.nowNs());
}

function abortReason(signal: StopSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : 'aborted by caller';
}
