import type { LockId } from './ids.js';

/**
 * Phases of one lock operation, as ShiftLock's latency breakdown names them (ShiftLock §4.6,
 * Table 2). A protocol marks where each phase starts; whoever runs the protocol times them.
 */
export type LockPhase =
  /** The first atomic of an acquire (try, or join the queue) or of a release. */
  | 'initial-atomic'
  /** Every further attempt after a failed first one, backoff included. */
  | 'retries'
  /** Telling the predecessor in the queue who waits behind it. */
  | 'notify-predecessor'
  /** Waiting for the predecessor's handover. */
  | 'wait-predecessor'
  /** A writer waiting for readers that went first to leave. */
  | 'wait-readers'
  /** A reader waiting for the lock to pass to readers. */
  | 'wait-writers'
  /** A releaser waiting for its successor to show up and handing the lock over to it. */
  | 'notify-successor';

export const LOCK_PHASES: readonly LockPhase[] = [
  'initial-atomic',
  'retries',
  'notify-predecessor',
  'wait-predecessor',
  'wait-readers',
  'wait-writers',
  'notify-successor',
];

/**
 * Where a protocol says "from now on this operation is in phase X". The protocol never reads a
 * clock for this: the observer does, so the same marks give virtual time on `sim` and real time
 * elsewhere. A mark closes the phase before it; the end of the operation closes the last one.
 */
export interface PhaseMarks {
  enter(phase: LockPhase): void;
  /** This client starts resetting `lock` (DSLR's counter reset, DecLock's lock reset), whatever operation it is in. */
  resetBegin(lock: LockId): void;
  /** The reset of `lock` this client began is over: `done` by this client, `other` when another client finished it. */
  resetEnd(lock: LockId, outcome: 'done' | 'other'): void;
}

export const noopPhaseMarks: PhaseMarks = { enter() {}, resetBegin() {}, resetEnd() {} };
