/** 16-bit acquisition timestamps in µs since the last clock sync; they wrap every 65.536 ms. */
export const TS_MASK = 0xffff;
const HALF_RANGE = 0x8000;

export function toTs16(elapsedNs: number): number {
  return Math.floor(elapsedNs / 1_000) & TS_MASK;
}

/**
 * Wrap-aware "a was taken before b": within half the range the smaller value is earlier,
 * otherwise the larger one is (it wrapped). Antisymmetric; a tie is not earlier either way.
 */
export function earlier(a: number, b: number): boolean {
  if (a === b) return false;
  const distance = Math.abs(a - b);
  return distance <= HALF_RANGE ? a < b : a > b;
}

/** Earliest of several timestamps under {@link earlier}, or undefined for none. */
export function earliest(values: Iterable<number>): number | undefined {
  let best: number | undefined;
  for (const value of values) if (best === undefined || earlier(value, best)) best = value;
  return best;
}
