import { describe, expect, it } from 'vitest';
import { GivenUpRequests } from './given-up.js';

describe('GivenUpRequests', () => {
  it('remembers a request by lock, machine and task', () => {
    const g = new GivenUpRequests();
    g.note(3, 1, 42);
    expect(g.has(3, 1, 42)).toBe(true);
    expect(g.has(3, 2, 42)).toBe(false);
    expect(g.has(4, 1, 42)).toBe(false);
  });

  it('is bounded: the oldest request is forgotten first, a renewed one kept', () => {
    const g = new GivenUpRequests(2);
    g.note(1, 1, 1);
    g.note(1, 1, 2);
    g.note(1, 1, 1); // renewed: now the newest
    g.note(1, 1, 3);
    expect(g.size).toBe(2);
    expect(g.has(1, 1, 2)).toBe(false);
    expect(g.has(1, 1, 1)).toBe(true);
    expect(g.has(1, 1, 3)).toBe(true);
  });
});
