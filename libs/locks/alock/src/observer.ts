import type { LockId } from '@lockfabric/ports';

/** How a holder got the lock (spec §4.2): its own Peterson entry, a cohort hand-off, or a re-arbitration after budget 0. */
export type EntryKind = 'leader' | 'passed' | 'reacquired';

interface EventBase {
  readonly lock: LockId;
  readonly cls: 'local' | 'remote';
  /** The descriptor reference of this acquisition (client and descriptor index). */
  readonly ref: bigint;
}

/**
 * Protocol steps reported to an {@link AlockObserver}, for invariant checking in tests (spec §4.2).
 * Each is reported by the acting process right after the step took effect (`victim`, `enter`,
 * `swap`, `emptied`) or right before it is issued (`link`, `exit`, `handoff`), so causally ordered
 * steps are reported in causal order.
 */
export type AlockEvent =
  | (EventBase & { readonly type: 'swap'; readonly pred: bigint })
  | (EventBase & { readonly type: 'link'; readonly pred: bigint })
  | (EventBase & { readonly type: 'victim' })
  | (EventBase & { readonly type: 'enter'; readonly kind: EntryKind; readonly budget: number; readonly pred: bigint })
  | (EventBase & { readonly type: 'exit' })
  | (EventBase & { readonly type: 'handoff'; readonly to: bigint; readonly budget: number })
  | (EventBase & { readonly type: 'emptied' })
  /** The releaser gave up on a successor that swapped in but never linked, and cleared the tail (`cut` holds the last tail it saw). */
  | (EventBase & { readonly type: 'cut'; readonly tail: bigint })
  | (EventBase & { readonly type: 'abandon' });

export type AlockObserver = (event: AlockEvent) => void;

/** An event without the fields every event of one acquisition shares. */
export type AlockEventBody = AlockEvent extends infer E ? (E extends AlockEvent ? Omit<E, keyof EventBase> : never) : never;
