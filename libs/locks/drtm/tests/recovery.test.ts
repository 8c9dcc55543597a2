import { describe, expect, it } from 'vitest';
import { FREE, drtmWordAfterDeath, leaseWord, writeLockedWord } from '../src/index.js';

describe('drtmWordAfterDeath', () => {
  it('frees a write lock owned by the dead machine only', () => {
    expect(drtmWordAfterDeath(writeLockedWord(2), 2)).toBe(FREE);
    expect(drtmWordAfterDeath(writeLockedWord(1), 2)).toBeUndefined();
    // The word also names the writing client; the machine alone decides.
    expect(drtmWordAfterDeath(writeLockedWord(2, 7), 2)).toBe(FREE);
    expect(drtmWordAfterDeath(writeLockedWord(1, 7), 2)).toBeUndefined();
  });

  it('leaves read leases to expire on their own', () => {
    expect(drtmWordAfterDeath(leaseWord(1_000_000), 2)).toBeUndefined();
    expect(drtmWordAfterDeath(FREE, 2)).toBeUndefined();
  });
});
