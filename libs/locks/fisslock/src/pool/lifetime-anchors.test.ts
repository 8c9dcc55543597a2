import { describe, expect, it } from 'vitest';
import type { Agent } from './agent.js';
import { BouncedOrigins, LifetimeAnchors } from './lifetime-anchors.js';

const agent = (): Agent => ({ mode: 'shared', inca: 0, holders: new Set(), wqueue: [] });

describe('LifetimeAnchors', () => {
  it('knows a packet is of this lifetime only when its seq follows an anchor of the same sender', () => {
    const anchors = new LifetimeAnchors();
    const a = agent();
    anchors.start(a, 1, 10);
    expect(anchors.decidedWithin(a, 1, 10)).toBe(false); // sent before the agent arrived
    expect(anchors.decidedWithin(a, 1, 11)).toBe(true);
    expect(anchors.decidedWithin(a, 2, 99)).toBe(false); // nothing known of machine 2 yet
    anchors.decided(a, 2, 40);
    anchors.decided(a, 2, 45); // a later copy does not move the anchor up
    expect(anchors.decidedWithin(a, 2, 40)).toBe(false);
    expect(anchors.decidedWithin(a, 2, 41)).toBe(true);
    anchors.decided(a, 2, 30);
    expect(anchors.decidedWithin(a, 2, 31)).toBe(true);
  });

  it('a new agent object (a new lifetime, or one rebuilt) starts with nothing known; start forgets other senders', () => {
    const anchors = new LifetimeAnchors();
    const a = agent();
    anchors.decided(a, 2, 5);
    expect(anchors.decidedWithin(agent(), 2, 6)).toBe(false);
    anchors.start(a, 1, 0);
    expect(anchors.decidedWithin(a, 2, 6)).toBe(false);
    expect(anchors.decidedWithin(a, 1, 1)).toBe(true);
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
