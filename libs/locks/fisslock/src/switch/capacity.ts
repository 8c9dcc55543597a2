/**
 * FissLock's register budget (spec §6.3). With C bits per MAU, N locks need
 * `ceil(N/C)·2 + ceil(8N/C)·2 + 4` MAUs: the 1-bit `free` and `r/w` arrays, the 8-bit `mid` and
 * `inca` arrays, and four MAUs of control logic.
 */
export const CONTROL_MAUS = 4;

export function mausNeeded(lockCount: number, mauCapacityBits: number): number {
  return Math.ceil(lockCount / mauCapacityBits) * 2 + Math.ceil((8 * lockCount) / mauCapacityBits) * 2 + CONTROL_MAUS;
}

/**
 * The largest N the formula admits in `stages` MAUs: the best split gives `a` MAUs to each 1-bit
 * array and `b` to each 8-bit array with 2a + 2b + 4 ≤ stages (12 MAUs of 560 000 bytes → a = 1,
 * b = 3 → 1.68 M locks).
 */
export function lockCapacity(stages: number, mauCapacityBits: number): number {
  const budget = Math.floor((stages - CONTROL_MAUS) / 2);
  let best = 0;
  for (let a = 1; a < budget; a++) {
    const b = budget - a;
    best = Math.max(best, Math.min(a * mauCapacityBits, Math.floor((b * mauCapacityBits) / 8)));
  }
  return best;
}

/** How many MAUs each 8-bit array is split over, for the best allocation in `stages` MAUs. */
export function byteArrayParts(stages: number, mauCapacityBits: number): number {
  const budget = Math.floor((stages - CONTROL_MAUS) / 2);
  for (let a = 1; a < budget; a++) {
    const b = budget - a;
    if (Math.min(a * mauCapacityBits, Math.floor((b * mauCapacityBits) / 8)) === lockCapacity(stages, mauCapacityBits)) return b;
  }
  return Math.max(1, budget - 1);
}
