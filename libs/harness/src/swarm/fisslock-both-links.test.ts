import { fisslock } from '@lockfabric/lock-fisslock';
import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from './run.js';

// FissLock's swarm seeds at 10 % loss, duplication, reordering and delay on both links (the
// switchFaultRate extra), each with whatever else its mix draws (here a memory-node restart).
describe('fisslock swarm, both links at 10 %: regression seeds', () => {
  // Seed 492, lock 1. A ② grant to machine 2's task 1048613 (decider inca 4 → 5) lost its
  // GRANTED copy to the agent on machine 1; the holder's RELEASE circled until machine 1 wrote
  // the copy off with it (spec §13.4: inca +1, no holder). A DUP copy of the same ACQUIRE,
  // bounced between machine 2 and the pending agent meanwhile, then reached the restored agent
  // and was counted as the lost grant once more (grantedDuplicate): a holder whose RELEASE was
  // spent, and an inca one ahead of the decider's (8 against 7). Every transfer was refused, the
  // watchdog saw only a stalled queue (a suspicion, not reported), and the heal probe's acquires
  // of lock 1 timed out. Fixed in the agent pool (pool/counted-grants.ts): a DUP copy of a
  // request whose ② grant was already counted there counts nothing. `mutantRecountDupGrant`
  // restores the old rule, and with it the old history.
  it('seed 492: passes; with mutantRecountDupGrant lock 1 is never acquirable again', async () => {
    const fixed = await runSwarmSeed(fisslock, 492, {}, { switchFaultRate: 0.1 });
    expect(fixed.description).toContain('memory=restart@');
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const extras = { switchFaultRate: 0.1 };
    const mutant = await runSwarmSeed(fisslock, 492, { mutantRecountDupGrant: true }, extras);
    expect(mutant.failure).toMatchObject({ kind: 'liveness' });
    expect(mutant.failure?.detail).toContain('after healing, locks 1 not acquirable');
  }, 60_000);
});
