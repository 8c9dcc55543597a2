import type { Clock, LockId, LockMode, Random } from '@lockfabric/ports';
import { createHotspotChooser } from './hotspot.js';
import { sparseLockId } from './scramble.js';
import type { WorkloadSpec } from './spec.js';
import { ZipfianGenerator } from './zipf.js';

export interface KeyChooser {
  next(): LockId;
}

export interface ModeChooser {
  next(): LockMode;
}

/**
 * Lock ids drawn from the spec's distribution with the client's `random`. The scrambling
 * permutation is keyed by the spec's seed, so every client of a run agrees on the hot locks.
 * With `lockIds: 'sparse'` each drawn index is spread by {@link sparseLockId}.
 */
export function createKeyChooser(spec: Pick<WorkloadSpec, 'locks' | 'distribution' | 'seed' | 'lockIds' | 'hotspot'>, random: Random, clock?: Pick<Clock, 'nowNs'>): KeyChooser {
  // The dynamic workload's hot block moves with time, so it needs the client's clock.
  const indexes = spec.hotspot && clock ? createHotspotChooser(spec.hotspot, spec.locks, random, clock) : createIndexChooser(spec, random);
  return spec.lockIds === 'sparse' ? { next: () => sparseLockId(indexes.next()) } : indexes;
}

function createIndexChooser(spec: Pick<WorkloadSpec, 'locks' | 'distribution' | 'seed'>, random: Random): KeyChooser {
  const locks = spec.locks;
  if (spec.distribution === 'uniform') return { next: () => random.int(locks) };
  const zipf = new ZipfianGenerator({ items: locks, theta: spec.distribution.zipf, scrambled: spec.distribution.scrambled ?? false, scrambleSeed: spec.seed });
  return { next: () => zipf.next(random) };
}

/** Shared with probability `readRatio`, exclusive otherwise; 0 and 1 draw nothing. */
export function createModeChooser(readRatio: number, random: Random): ModeChooser {
  if (!(readRatio >= 0 && readRatio <= 1)) throw new RangeError(`readRatio must be between 0 and 1, got ${readRatio}`);
  if (readRatio === 0) return { next: () => 'exclusive' };
  if (readRatio === 1) return { next: () => 'shared' };
  return { next: () => (random.next() < readRatio ? 'shared' : 'exclusive') };
}
