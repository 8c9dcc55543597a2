import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '@lockfabric/harness';
import { fisslock } from '@lockfabric/lock-fisslock';

// FissLock's swarm profile with switch loss and duplication on (`lossy`; the profile itself still
// runs `delay`: libs/locks/fisslock/README.md "Failures and anomalies").
const lossy = { ...fisslock, swarm: { ...fisslock.swarm, switchFaults: 'lossy' as const } };

// Swarm seeds 113 and 292 under `lossy` (egress loss 6–8 %): a ② copy circled behind its own
// request's abort at a machine with no agent; the abort reached the agent first and was dropped
// (nothing recorded), then the copy made a holder nobody releases and the lock never freed. The
// agent now remembers aborts it dropped and releases such a late holder at once
// (libs/locks/fisslock/src/pool/given-up.ts; the old rule is a mutant in its src/pool/agent-state.test.ts).
describe('fisslock swarm under switch loss: late ② copies of given-up requests', () => {
  it('seeds 113 and 292 are safe and every lock is acquirable after healing', async () => {
    for (const seed of [113, 292]) {
      const r = await runSwarmSeed(lossy, seed);
      expect(r.description).toMatch(/switch=egress\(loss=0\.0[67]/);
      expect(r.failure, `seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
    }
  });
});

// Seed 242 (both links, loss 5.5 %): a lost ① GRANT; the requester's DUP copy circled while its
// unREACHED abort freed the lock at the switch (the timeout-free). The next local request got a new
// agent, the circling copy queued there and was handed the lock by self-transfer while the abort
// was still unanswered, so the client took it silently ("the abort will release it"). The abort
// came back `freed` and released nothing here: a holder nobody releases. The pool now releases it
// when the timeout-free is answered (the old rule is a mutant in libs/locks/fisslock's src/pool/agent-state.test.ts).
describe('fisslock swarm under switch loss: a grant taken silently before a timeout-free is answered', () => {
  it('seed 242 passes', async () => {
    const fixed = await runSwarmSeed(lossy, 242);
    expect(fixed.description).toMatch(/switch=both\(loss=0\.055/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
  });
});

// Seed 268 (egress loss 1.8 %, compute node 1 killed): machine 3 was bouncing a dead-to-be
// machine's ACQUIRE and abort with back-off when the kill came. The recovery (S1–S3) replaced the
// link, but the deferred copies were sent on the new one afterwards: the dead task was queued
// again, handed the lock, and its GRANT was never answered (a pending agent for ever). A deferred
// copy now goes only on the link it was bounced on (deferredBounceLink in libs/locks/fisslock's
// src/pool/bounce-backoff.ts; its unit test fails the old rule).
describe('fisslock swarm under switch loss: bounced copies deferred across a recovery', () => {
  it('seed 268 passes', async () => {
    const fixed = await runSwarmSeed(lossy, 268);
    expect(fixed.description).toMatch(/kill=compute0.*switch=egress\(loss=0\.018/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
  });
});

// Seeds 24, 364 and 48 (egress loss 7–9 %): the decider granted a read ② and both its GRANT and its
// ② copy to the agent were lost. The requester's resend is a duplicate, which the decider only
// routes, so the agent queued it as a waiter and its abort removed it: the decider had counted the
// grant, the agent never did, and every FREE / transfer of the lock was refused from then on. The
// decider now marks a routed duplicate it would grant ② (GRANTABLE), and an agent that knows the
// first copy was decided within its own lifetime counts it as that ② grant (src/pool/lifetime-
// anchors.ts). The anchor: seed 24, the install (requester on the agent's machine); 364, an earlier
// ② copy of the requester's machine; 48 (a lost ① GRANT besides), the agent built after the refused
// timeout-free, and duplicates its machine had bounced meanwhile. `mutantDupNeverGranted` queues
// them as before.
describe('fisslock swarm under switch loss: a ② grant whose GRANT and copy were both lost', () => {
  it('seeds 24, 364 and 48 pass, and fail liveness with mutantDupNeverGranted', async () => {
    for (const seed of [24, 364, 48]) {
      const fixed = await runSwarmSeed(lossy, seed);
      expect(fixed.description).toMatch(/switch=egress\(loss=0\.0[79]/);
      expect(fixed.failure, `seed ${seed}: ${fixed.failure?.detail}`).toBeUndefined();
      const mutant = await runSwarmSeed(lossy, seed, { mutantDupNeverGranted: true });
      expect(mutant.failure?.kind, `seed ${seed}`).toBe('liveness');
      expect(mutant.failure?.detail).toMatch(/not acquirable/);
    }
  });
});
