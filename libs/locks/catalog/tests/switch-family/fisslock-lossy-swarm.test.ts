import { describe, expect, it } from 'vitest';
import { runInMemory, runSwarmSeed, swarmMix, swarmRunOptions } from '@lockfabric/harness';
import { fisslock } from '@lockfabric/lock-fisslock';

// The profile these seeds were found under: `lossy` switch faults, no cuts, the default T_STUCK
// (the profile itself has since added cuts and a shorter T_STUCK, which redraw their mixes).
const lossy = { ...fisslock, swarm: { pauses: 'beyond-lease' as const, switchFaults: 'lossy' as const, nodeKill: true, memoryRestart: true, flushedVerbs: true } };

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
// them as before. These seeds replay the schedule they were found under, without a control plane
// for loss alone (`mutantStuckRepair: 'unanswered'`): its traffic moves every event, and its
// per-lock repair would mend what the mutant breaks, while this test is about the protocol rule.
async function withoutRepair(seed: number, options: Record<string, boolean> = {}) {
  const mix = swarmMix(lossy, seed, options);
  const run = await runInMemory({ ...swarmRunOptions(lossy, mix), mutantStuckRepair: 'unanswered' });
  return { description: mix.description, violations: run.verdict.violations.length, ok: run.verdict.ok && !run.cutOff, stuck: run.heal?.stuck ?? [] };
}

describe('fisslock swarm under switch loss: a ② grant whose GRANT and copy were both lost', () => {
  it('seeds 24, 364 and 48 pass, and fail liveness with mutantDupNeverGranted', async () => {
    for (const seed of [24, 364, 48]) {
      const fixed = await withoutRepair(seed);
      expect(fixed.description).toMatch(/switch=egress\(loss=0\.0[79]/);
      expect(fixed, `seed ${seed}`).toEqual({ description: fixed.description, violations: 0, ok: true, stuck: [] });
      const mutant = await withoutRepair(seed, { mutantDupNeverGranted: true });
      expect(mutant.violations, `seed ${seed}`).toBe(0);
      expect(mutant.stuck.length, `seed ${seed}`).toBeGreaterThan(0);
    }
  });
});

// What loss, duplication and cuts still leave is the per-lock repair's (FissLock §5.3, spec choice
// 9): the agent pool's watchdog reports the lock stuck and the coordinator runs S1–S3 for it. Sim
// ran the coordinator only beside a kill or a coordinator crash, and T_STUCK (100 ms) outlasted the
// 50 ms heal budget. Seed 759 (both links, loss 7.4 %, no kill, coordinator up) needs the control
// plane for its loss alone; seed 351 (coordinator crash) needs the report within the budget; seed
// 364 (egress loss 7.1 %) a second repair, which the coordinator dropped for the live 2 s after the
// first one, the rest of a sim run.
describe('fisslock swarm: stuck-lock reports are answered with a repair within the heal budget', () => {
  it('seed 759 passes; without a control plane for a run that only loses packets, locks stay stuck', async () => {
    const fixed = await runSwarmSeed(fisslock, 759);
    expect(fixed.description).toMatch(/kill=none .*coordinator=up switch=both\(loss=0\.074/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const run = await runInMemory({ ...swarmRunOptions(fisslock, swarmMix(fisslock, 759)), mutantStuckRepair: 'unanswered' });
    expect(run.verdict.violations).toEqual([]);
    expect(run.heal?.stuck.length).toBeGreaterThan(0);
  });

  it('seed 351 passes with the profile\'s T_STUCK and fails liveness with the default 100 ms', async () => {
    const fixed = await runSwarmSeed(fisslock, 351);
    expect(fixed.description).toMatch(/coordinator=crash.*switch=both\(loss=0\.044.*opts=tStuckNs=10000000/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const late = await runSwarmSeed(fisslock, 351, { tStuckNs: 100_000_000 });
    expect(late.failure?.kind).toBe('liveness');
    expect(late.failure?.detail).toMatch(/not acquirable within 50 ms/);
  });

  it('seed 364 passes; with reports dropped for 2 s after a repair, it does not', async () => {
    const fixed = await runSwarmSeed(fisslock, 364);
    expect(fixed.description).toMatch(/coordinator=up switch=egress\(loss=0\.071/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const run = await runInMemory({ ...swarmRunOptions(fisslock, swarmMix(fisslock, 364)), mutantStuckRepair: 'once-per-run' });
    expect(run.verdict.violations).toEqual([]);
    expect(run.heal?.stuck.length).toBeGreaterThan(0);
  });
});
