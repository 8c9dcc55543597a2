import { describe, expect, it } from 'vitest';
import { runWide } from './support/wide-run.js';
import { expectSound } from './support/wide-sweep.js';
import { FAULTS_10 } from './support/workload.js';

// A duplicate ACQUIRE is counted as a ② grant only when the agent knows its first copy was decided
// within the agent's own lifetime (src/pool/lifetime-anchors.ts). An agent restored by a repeated
// refusal may be stale: wide seed 455 had FREE 933 accepted (its ACK lost), ACQUIRE 934 granted ①
// on the free lock (its GRANT lost), the resent FREE refused again once ② grants put the decider's
// inca ahead, so the old agent came back; 934's duplicate was then counted as its ② grant and the
// audit found two agents for the lock. After a repeated refusal the anchors now stay only when no
// lifetime can have begun here since (AgentPool.mayHaveMovedOn); `mutantTrustReRefusal` keeps them.
describe('fisslock: duplicates counted as ② grants, after an agent restored by a repeated refusal', () => {
  it('wide seed 455 at 10 % faults is sound, and shows two agents for one lock with mutantTrustReRefusal', async () => {
    expectSound('seed 455', await runWide(455, { faults: FAULTS_10 }));
    const mutant = await runWide(455, { faults: FAULTS_10, protocolOptions: { mutantTrustReRefusal: true } });
    expect(mutant.counters['dupGrantsCounted']).toBeGreaterThan(0);
    expect(mutant.agentsPerLockMax).toBe(2);
  }, 60_000);
});
