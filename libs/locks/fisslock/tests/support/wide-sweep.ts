import { expect } from 'vitest';
import type { WideResult } from './wide-run.js';
import type { EndState } from './end-state.js';

/**
 * What every seed must show: no exclusion violation, every acquire granted or failed with
 * LockTimeoutError, one agent per lock (live, pending or in flight), agent mode = decider mode
 * (Lemma 1), and a consistent end state (end-state.ts). A timed-out acquire (liveness under
 * faults) is allowed, and so is a lock left stuck (`endState.stuck`, spec §12.9's watchdog case).
 */
export function expectSound(at: string, r: WideResult): void {
  expect(r.violations, at).toEqual([]);
  expect(r.untyped, `${at}: acquires failed without LockTimeoutError`).toBe(0);
  expect(r.unfinished, `${at}: acquires neither granted nor timed out\n${r.stalled ?? ''}`).toBe(0);
  expect(r.agentsPerLockMax, `${at}: two agents for one lock`).toBeLessThanOrEqual(1);
  expect(r.modeMismatch, `${at}: agent mode differs from the decider's (Lemma 1)`).toBe(0);
  expectEnd(at, r.endState);
}

/**
 * The end-state check of one run: no broken invariant; with `strict` (fault-free runs, or seeds
 * known to end well) the run also ended quiescent with every lock free.
 */
export function expectEnd(at: string, end: EndState, strict = false): void {
  expect(end.problems, `${at}: end state (spec §11 properties 4, 5)`).toEqual([]);
  if (!strict) return;
  expect(end.checked, `${at}: the run did not end quiescent`).toBe(true);
  expect(end.stuck, `${at}: locks left held with every client done`).toEqual([]);
}
