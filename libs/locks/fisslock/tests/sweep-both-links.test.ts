import { describe, it } from 'vitest';
import { runWide } from './support/wide-run.js';
import { expectSound } from './support/wide-sweep.js';
import { FAULTS_10_BOTH_WAYS } from './support/workload.js';

// Seeds of the 10 % sweep with faults on both links (machine→switch as well) that broke exclusion
// or liveness. Runs are deterministic per seed.
describe('fisslock at 10% faults on both links: regression seeds', () => {
  // A self-transfer GRANT (agent and grantee on machine 2, shared, inca 2) was accepted (decider
  // inca → 0, mid and mode unchanged) and its GRANT back to machine 2 lost; the resend was taken
  // as a standing refusal (§13.1 re-refusal checked "inca differs") and machine 2 rebuilt its
  // agent with inca 2, two ahead of the decider. Two later ② grants made a stale exclusive
  // transfer match, granted while a ② holder still held. Fixed in the decider (incaAhead).
  it('seed 31: an accepted self-transfer resent after its GRANT was lost is not re-refused', async () => {
    expectSound('seed 31', await runWide(31, { faults: FAULTS_10_BOTH_WAYS }));
  });

  // Machine 1 (no agent; the decider said shared, inca 4) had two unREACHED aborts reissued; the
  // first was refused (inca 4 ≠ 0) and had machine 1 build an empty agent, which counted the ②
  // copies up to inca 4 and handed the lock on by transfer (seq 482). The second abort (seq 470)
  // had waited behind a sequence gap and reached the switch just before the transfer: still mid 1,
  // inca 4, so refused too, and its INVALID FREE [ABORT] came back while the agent was pending. The
  // pool restored that pending agent, live, at inca 0; the transfer was then accepted (4 = 4) and
  // machine 1 kept a second, stale shared agent, whose local ④ grant overlapped machine 2's
  // exclusive hold. Fix (src/pool/abort-refusal.ts): a refused timeout-free never restores a
  // pending agent; only the answer to that agent's own FREE / transfer decides it
  // (tests/abort-refusal-pending.test.ts replays it, and fails on the old rule).
  it('seed 370: a refused timeout-free does not restore an agent whose transfer is still pending', async () => {
    expectSound('seed 370', await runWide(370, { faults: FAULTS_10_BOTH_WAYS }));
  });

  // Same mechanism (machine 2, abort seq 426): the restored agent was a second agent for the lock.
  it('seed 378: the same, a second agent restored next to the transferred one', async () => {
    expectSound('seed 378', await runWide(378, { faults: FAULTS_10_BOTH_WAYS }));
  });

  // Seed 8, fixed. Machine 2 sent an aborted RELEASE for task 4 with ABORT alone (the §5.2
  // timeout-free, reissued by the pool) behind an earlier bounced ACQUIRE copy of its task 1048581
  // (seq 190) and behind two other aborts (186, 187). 186 freed the lock (orphaned at machine 2),
  // the copy then found it free and got a ① grant to machine 2, and the abort (seq 191) found
  // mid = machine 2 and inca 0 and freed that lifetime: the decider cannot tell two tasks of one
  // machine apart. Machine 2's agent (holder 1048581) lived on; its later exclusive FREE freed the
  // lock once more while machine 3 held it shared. Fix (agent-pool.ts timeoutFreeUnsafe,
  // pool/lifetime-marks.ts): no abort-only RELEASE of a lock while an unanswered ACQUIRE copy of
  // another local task may be decided on a free lock (an ender — FREE, agent GRANT, abort-only —
  // of this machine after the last packet the switch routed back here as held), nor while another
  // abort-only of the lock is unanswered; the abort circles REACHED until the copy is answered, and
  // the agent it installed here then takes it.
  it('seed 8: a timeout-free no longer frees a ① grant made to another task of the same machine', async () => {
    const r = await runWide(8, { faults: FAULTS_10_BOTH_WAYS });
    expectSound('seed 8', r);
  });

  // Seed 2, fixed. The same timeout-free (an abort of task 1048579 freed lock 3 just granted ① to
  // machine 2's task 2) while machine 2's FREE seq 192 waited behind an ingress gap. The lock came
  // back to machine 2 by transfer and install() dropped the FREE from the link as settled, though
  // it had never reached the switch: seq 192 stayed a hole and the switch dropped every later
  // packet of machine 2 as a gap, for ever. Fixed by the rule above, which keeps the first half
  // from happening, and in the pool: a new agent voids such a FREE / transfer GRANT instead of
  // dropping it (ReliableLink.voidOutstanding): the same seq is resent as a filler the switch only
  // routes back (tests/void-on-install.test.ts scripts the second half).
  it('seed 2: no FREE is dropped unacknowledged; no permanent sequence hole', async () => {
    expectSound('seed 2', await runWide(2, { faults: FAULTS_10_BOTH_WAYS }));
  });
});
