import { describe, expect, it } from 'vitest';
import { BounceBackoff, deferredBounceLink } from './bounce-backoff.js';

describe('BounceBackoff', () => {
  it('the first bounce goes at once, the next ones in a row double up to the RTO; a pause or the agent starts again', () => {
    const b = new BounceBackoff(1_000, 10_000);
    expect([0, 1, 2, 3, 4, 5].map((i) => b.delayNs(7, i * 100))).toEqual([0, 1_000, 2_000, 4_000, 8_000, 10_000]);
    expect(b.delayNs(7, 500 + 20_001)).toBe(0); // more than 2 RTO since the last bounce
    b.forget(7);
    expect(b.delayNs(7, 20_600)).toBe(0);
    expect(b.delayNs(8, 20_600)).toBe(0); // per lock
  });
});

describe('deferredBounceLink: where a deferred bounced copy goes (swarm lossy seed 268)', () => {
  type Rule = (bouncedOn: string, current: string) => string | undefined;
  const cases: [string, string, string | undefined][] = [
    ['link-1', 'link-1', 'link-1'], // same link: sent
    ['link-1', 'link-2', undefined], // a recovery replaced the link: stale, dropped
  ];
  const wrong = (rule: Rule): number => cases.filter(([on, now, want]) => rule(on, now) !== want).length;

  it('on the link it was bounced on, nowhere after a recovery replaced that link', () => {
    expect(wrong(deferredBounceLink)).toBe(0);
  });

  it('mutant (the old rule: send on whatever link is current) fails: the dead task was queued again', () => {
    expect(wrong((_on, now) => now)).toBe(1);
  });
});
