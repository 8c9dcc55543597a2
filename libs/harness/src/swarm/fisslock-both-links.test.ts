import { fisslock } from '@lockfabric/lock-fisslock';
import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from './run.js';

// FissLock's swarm seeds at 10 % loss, duplication, reordering and delay on both links (the
// switchFaultRate extra), each with whatever else its mix draws (here a memory-node restart).
describe('fisslock swarm, both links at 10 %: regression seeds', () => {
  let fixedCounts: Readonly<Record<string, number>> | undefined;
  let mutantCounts: Readonly<Record<string, number>> | undefined;
  // Seed 492, lock 1. A ② grant to machine 2's task 1048613 (decider inca 4 → 5) lost its
  // GRANTED copy to the agent on machine 1; the holder's RELEASE circled until machine 1 wrote
  // the copy off with it (spec §13.4: inca +1, no holder). A DUP copy of the same ACQUIRE,
  // bounced between machine 2 and the pending agent meanwhile, then reached the restored agent
  // and was counted as the lost grant once more (grantedDuplicate): a holder whose RELEASE was
  // spent, and an inca one ahead of the decider's (8 against 7). Every transfer was refused, the
  // watchdog saw only a stalled queue, and while suspicions were not reported the heal probe's
  // acquires of lock 1 timed out. Fixed in the agent pool (pool/counted-grants.ts): a DUP copy of
  // a request whose ② grant was already counted there counts nothing. `mutantRecountDupGrant`
  // restores the old rule, and with it the old history, up to the suspicion: the coordinator now
  // confirms it (nobody holds the holder) and repairs lock 1, so the mutant shows as that repair.
  it('seed 492: passes with no suspicion repaired; with mutantRecountDupGrant lock 1 is stuck until a confirmed suspicion repairs it', async () => {
    const extras = { switchFaultRate: 0.1 };
    const fixed = await runSwarmSeed(fisslock, 492, {}, { ...extras, judge: (run) => void (fixedCounts = run.control?.counts) });
    expect(fixed.description).toContain('memory=restart@');
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(fisslock, 492, { mutantRecountDupGrant: true }, { ...extras, judge: (run) => void (mutantCounts = run.control?.counts) });
    expect(mutant.failure, mutant.failure?.detail).toBeUndefined();
    expect(fixedCounts?.['fissSuspicionsRepaired']).toBe(0);
    expect(mutantCounts?.['fissSuspicionsRepaired']).toBe(1);
  }, 60_000);

  // Seed 510, lock 0 (compute node 1 killed at 0.5 ms besides). Machine 2's agent bounced the
  // GRANTED copy of its own task 1048597's ② grant while pending, then wrote it off with the
  // task's RELEASE and freed the lock. The bounced copy (machine 2's seq 158) reached a free lock,
  // and the decider dropped it without an ACK: machine 2 resent it every RTO to the end of the
  // run, and FissLock's invariants found a packet left unacknowledged. The decider now ACKs such a
  // copy as a duplicate; `mutantSilentStaleCopy` drops it silently again.
  it('seed 510: passes; with mutantSilentStaleCopy a packet stays unacknowledged for ever', async () => {
    const extras = { switchFaultRate: 0.1 };
    expect((await runSwarmSeed(fisslock, 510, {}, extras)).failure).toBeUndefined();
    const mutant = await runSwarmSeed(fisslock, 510, { mutantSilentStaleCopy: true }, extras);
    expect(mutant.failure).toMatchObject({ kind: 'safety' });
    expect(mutant.failure?.detail).toMatch(/^fisslock invariants after healing:\nmachine 2: 1 packets unacknowledged/);
  }, 60_000);
});
