// The verdict rule of the reproduce contract: a claim is reproduced when ours points the same way
// as the paper's and lies within ±25 % of it; same-direction when only the direction agrees.
import type { Claim } from './contract.js';

/** Within this relative distance of the paper's number a same-direction result counts as reproduced. */
export const REPRODUCED_WITHIN = 0.25;

/**
 * What "no effect" is for a claim's unit: a ratio (×) of 1, a reduction or gain (%) of 0. The
 * direction of a claim is the side of this neutral value its number lies on.
 */
export type ClaimKind = 'ratio' | 'reduction';

export function neutralOf(kind: ClaimKind): number {
  return kind === 'ratio' ? 1 : 0;
}

export function unitOf(kind: ClaimKind): string {
  return kind === 'ratio' ? '×' : '%';
}

export interface JudgeMutants {
  /** Test-only: take every result as pointing the paper's way (broken on purpose). */
  readonly mutantIgnoreDirection?: boolean;
}

/** Direction, deviation and verdict of ours against the paper's number. */
export function judge(kind: ClaimKind, paper: number, ours: number, mutants: JudgeMutants = {}): Pick<Claim, 'sameDirection' | 'deviation' | 'verdict'> {
  const neutral = neutralOf(kind);
  const sameDirection = mutants.mutantIgnoreDirection === true ? Number.isFinite(ours) : Number.isFinite(ours) && Math.sign(ours - neutral) === Math.sign(paper - neutral);
  const deviation = paper === 0 ? (ours === 0 ? 0 : Infinity) : ours / paper - 1;
  const verdict = !sameDirection ? 'opposite' : Math.abs(deviation) <= REPRODUCED_WITHIN ? 'reproduced' : 'same-direction';
  return { sameDirection, deviation, verdict };
}
