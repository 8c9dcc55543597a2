import { describe, expect, it } from 'vitest';
import { BouncedOrigins, NO_ANCHORS, anchorsFrom, decidedWithin, withDecided } from './lifetime-anchors.js';

describe('lifetime anchors', () => {
  it('knows a packet is of this lifetime only when its seq follows an anchor of the same sender', () => {
    let anchors = anchorsFrom(1, 10);
    expect(decidedWithin(anchors, 1, 10)).toBe(false); // sent before the agent arrived
    expect(decidedWithin(anchors, 1, 11)).toBe(true);
    expect(decidedWithin(anchors, 2, 99)).toBe(false); // nothing known of machine 2 yet
    anchors = withDecided(anchors, 2, 40);
    anchors = withDecided(anchors, 2, 45); // a later copy does not move the anchor up
    expect(decidedWithin(anchors, 2, 40)).toBe(false);
    expect(decidedWithin(anchors, 2, 41)).toBe(true);
    anchors = withDecided(anchors, 2, 30);
    expect(decidedWithin(anchors, 2, 31)).toBe(true);
  });

  it('a new agent (a new lifetime, or one rebuilt) starts with nothing known; a start forgets other senders', () => {
    const a = withDecided(NO_ANCHORS, 2, 5);
    expect(decidedWithin(NO_ANCHORS, 2, 6)).toBe(false);
    expect(decidedWithin(a, 2, 6)).toBe(true);
    const restarted = anchorsFrom(1, 0);
    expect(decidedWithin(restarted, 2, 6)).toBe(false);
    expect(decidedWithin(restarted, 1, 1)).toBe(true);
  });

  it('is pure: the anchors given are not changed', () => {
    const a = anchorsFrom(1, 10);
    withDecided(a, 2, 3);
    expect([...a]).toEqual([[1, 10]]);
  });
});

describe('BouncedOrigins', () => {
  it('remembers the requester seq of a bounced duplicate per lock and request, forgetting the oldest past its bound', () => {
    const origins = new BouncedOrigins(2);
    origins.note(3, 1, 7, 40);
    origins.note(4, 1, 7, 41);
    expect(origins.seqOf(3, 1, 7)).toBe(40);
    expect(origins.seqOf(3, 2, 7)).toBeUndefined();
    origins.note(5, 2, 9, 12);
    expect(origins.seqOf(3, 1, 7)).toBeUndefined(); // the oldest went
    expect([origins.seqOf(4, 1, 7), origins.seqOf(5, 2, 9)]).toEqual([41, 12]);
  });
});
