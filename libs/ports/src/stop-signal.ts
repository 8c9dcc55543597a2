/**
 * The part of `AbortSignal` the ports use: a flag, a reason and 'abort' listeners. Port methods
 * take this structural type, so a caller's real `AbortSignal` passes through unchanged, while hot
 * paths use a {@link Stopper} instead of an `AbortController` (which builds an EventTarget, Event
 * objects and, without a reason, a DOMException with its stack).
 */
export interface StopSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A cheap AbortController: `stop(reason)` marks its signal aborted and calls the listeners
 * synchronously, in registration order, each once — as AbortController does, so swapping one for
 * the other moves no promise hop and no simulation schedule. A listener added after the stop is
 * never called (also as with AbortSignal); callers check `aborted` first.
 */
export class Stopper implements StopSignal {
  private listeners: ((() => void) | undefined)[] | undefined;
  private stopped = false;
  private dispatching = false;
  private why: unknown;

  /** The signal to hand out; the stopper is its own signal (one object per wait). */
  get signal(): StopSignal {
    return this;
  }

  get aborted(): boolean {
    return this.stopped;
  }

  get reason(): unknown {
    return this.why;
  }

  /** Aborts the signal (a second call does nothing). Unlike AbortController, no reason means `undefined`. */
  stop(reason?: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.why = reason;
    const listeners = this.listeners;
    if (!listeners) return;
    // As with AbortSignal, a listener removed by an earlier one during the dispatch is not called.
    this.dispatching = true;
    try {
      for (let i = 0; i < listeners.length; i++) listeners[i]?.();
    } finally {
      this.dispatching = false;
      this.listeners = undefined;
    }
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.stopped) return;
    // AbortSignal ignores a listener already registered; so does this one.
    if (!this.listeners) this.listeners = [listener];
    else if (!this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    const at = listeners ? listeners.indexOf(listener) : -1;
    if (at < 0) return;
    if (this.dispatching) listeners![at] = undefined;
    else listeners!.splice(at, 1);
  }
}
