import { describe, expect, it } from 'vitest';
import { judge } from './verdict.js';
import type { ClaimKind, JudgeMutants } from './verdict.js';

type Case = readonly [kind: ClaimKind, paper: number, ours: number, verdict: 'reproduced' | 'same-direction' | 'opposite'];

// The rule: opposite when ours lies on the other side of "no effect" (1× or 0 %) from the paper;
// otherwise reproduced within ±25 % of the paper's number, same-direction beyond it.
const CASES: readonly Case[] = [
  ['ratio', 1.65, 1.65, 'reproduced'],
  ['ratio', 1.65, 1.3, 'reproduced'], // −21 %
  ['ratio', 1.65, 2.06, 'reproduced'], // +25 %
  ['ratio', 1.65, 1.2, 'same-direction'], // −27 %, still above 1
  ['ratio', 43.37, 3.8, 'same-direction'],
  ['ratio', 1.65, 0.96, 'opposite'], // below 1: ours is slower
  ['ratio', 1.65, 1, 'opposite'], // no effect at all is not the paper's direction
  ['ratio', 0.8, 0.9, 'reproduced'], // a paper ratio below 1, matched
  ['ratio', 0.8, 1.1, 'opposite'],
  ['reduction', 79.5, 83, 'reproduced'],
  ['reduction', 98.2, 60, 'same-direction'],
  ['reduction', 43.7, -24, 'opposite'], // ours is higher, not lower
  ['ratio', 1.65, Number.NaN, 'opposite'], // not measured never passes
];

function failures(mutants: JudgeMutants): string[] {
  return CASES.filter(([kind, paper, ours, verdict]) => judge(kind, paper, ours, mutants).verdict !== verdict).map((c) => c.join(' '));
}

describe('claim verdict', () => {
  it('follows the rule: direction first, then ±25 % of the paper', () => {
    expect(failures({})).toEqual([]);
  });

  it('reports ours/paper − 1 as the deviation', () => {
    expect(judge('ratio', 2, 1.5).deviation).toBeCloseTo(-0.25);
    expect(judge('reduction', 50, 60).deviation).toBeCloseTo(0.2);
    expect(judge('ratio', 2, 1.5).sameDirection).toBe(true);
    expect(judge('ratio', 2, 0.5).sameDirection).toBe(false);
  });

  it('catches the mutant that ignores direction', () => {
    const caught = failures({ mutantIgnoreDirection: true });
    expect(caught).toContain('ratio 1.65 0.96 opposite');
    expect(caught).toContain('reduction 43.7 -24 opposite');
  });
});
