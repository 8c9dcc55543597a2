import { PROTOCOL_IDS } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { holderTag, tableAdmin, tableResetProtocolIds, wordAfterDeath, writeLockedWord } from '../src/index.js';

describe('per-protocol node pieces looked up by id', () => {
  it('table maintenance exists for exactly the table-reset protocols, and checks their options', () => {
    const withAdmin = PROTOCOL_IDS.filter((id) => tableAdmin(id) !== undefined);
    expect([...withAdmin].sort()).toEqual([...tableResetProtocolIds()].sort());
    const admin = tableAdmin(tableResetProtocolIds()[0]);
    expect(admin?.entryBytes).toBe(8);
    expect(() => admin?.checkOptions({ layout: 'no-such-layout' })).toThrow();
    expect(() => admin?.checkOptions({})).not.toThrow();
  });

  it('word rules after a death clear the dead holder of the protocols that name it, and nothing else', () => {
    const cleared = PROTOCOL_IDS.filter((id) => wordAfterDeath(id) !== undefined);
    expect(cleared.length).toBe(2);
    const [first, second] = cleared.map((id) => wordAfterDeath(id)!);
    // one protocol tags the holder's machine and client, the other write-locks with the machine
    const rules = [first!, second!];
    const words = [holderTag({ node: 2, client: 5 }), writeLockedWord(2)];
    const freed = rules.flatMap((rule) => words.map((word) => rule(word, 2))).filter((w) => w !== undefined);
    expect(freed.length).toBeGreaterThanOrEqual(2);
    for (const rule of rules) for (const word of words) expect(rule(word, 7)).toBeUndefined();
  });
});
