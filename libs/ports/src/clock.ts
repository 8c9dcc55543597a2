import type { StopSignal } from './stop-signal.js';

/** Time as a protocol sees it. Virtual under `sim`, monotonic wall time elsewhere. */
export interface Clock {
  /** Nanoseconds since an arbitrary origin shared by every clock of one substrate. */
  nowNs(): number;
  /** Resolves after `ns`; rejects with the signal's reason if aborted first. */
  sleep(ns: number, signal?: StopSignal): Promise<void>;
}

/** Seeded randomness; under `sim` it is drawn from the run's single seed. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, bound). */
  int(bound: number): number;
}

export const NS_PER_US = 1_000;
export const NS_PER_MS = 1_000_000;
