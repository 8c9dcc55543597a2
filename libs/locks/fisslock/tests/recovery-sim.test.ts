import { describe, expect, it } from 'vitest';
import type { LockMode, NodeId } from '@lockfabric/ports';
import { readFissLockOptions } from '../src/options.js';
import { RecoverableFissLockClient, recoverInProcess } from '../src/recovery/index.js';
import type { RecoveryOutcome } from '../src/recovery/index.js';
import { fissSim, deciderControlOf as controlOf } from './support/fiss-sim.js';
import { ExclusionMonitor, mulberry } from './support/workload.js';


interface RunResult {
  readonly violations: string[];
  readonly granted: number;
  readonly grantedAfterRecovery: number;
  readonly aborted: number;
  readonly otherErrors: string[];
  readonly outcome: RecoveryOutcome | undefined;
  readonly heldAtRecovery: Map<number, Set<string>>;
  readonly restored: string[];
}

/**
 * Clients on every compute node take random locks and release them; at `failAtNs` the switch
 * loses its registers (S0) or one compute node stops, and 1 ms later the coordinator's steps run
 * in-process. Exclusion is checked online; a failed node's holds end when it fails (spec §7.1).
 */
async function runWithFailure(seed: number, failure: 'switch' | 'compute', mutant = false, untilNs = 5_000_000_000, recover = true): Promise<RunResult> {
  const sim = fissSim({ seed, locks: 8, computeNodes: 3 });
  const options = readFissLockOptions({ policy: 'read-preferring' });
  const rnd = mulberry(seed);
  const monitor = new ExclusionMonitor();
  const otherErrors: string[] = [];
  let granted = 0;
  let grantedAfterRecovery = 0;
  let aborted = 0;
  let outcome: RecoveryOutcome | undefined;
  const failAtNs = 3_000_000;
  const victim = sim.nodes[2] as NodeId;
  const dead = new Set<NodeId>();
  const heldAtRecovery = new Map<number, Set<string>>();
  const restored: string[] = [];
  const clients = new Map<NodeId, RecoverableFissLockClient[]>();

  const clock = sim.cluster.clock;
  const workers = sim.nodes.flatMap((node) =>
    Array.from({ length: 2 }, (_, k) => {
      const client = new RecoverableFissLockClient(sim.cluster.clientPorts({ node, client: k }), options);
      clients.set(node, [...(clients.get(node) ?? []), client]);
      return async () => {
        const me = `${node}/${k}`;
        for (let i = 0; i < 40 && !dead.has(node); i++) {
          const lock = Math.floor(rnd() * 4);
          const mode: LockMode = rnd() < 0.5 ? 'shared' : 'exclusive';
          let grant;
          try {
            grant = await client.acquire(lock, mode, { timeoutMs: 200 });
          } catch (error) {
            if (error instanceof Error && 'code' in error && error.code === 'LOCK_ABORTED') aborted++;
            else otherErrors.push(`${me}: ${String(error)}`);
            continue;
          }
          if (dead.has(node)) return;
          granted++;
          if (outcome || (!recover && clock.nowNs() > failAtNs + 1_300_000)) grantedAfterRecovery++;
          monitor.granted(lock, me, mode, `seed ${seed}`);
          await sim.cluster.clock.sleep(20_000 + Math.floor(rnd() * 200_000));
          if (dead.has(node)) return;
          monitor.released(lock, me);
          await client.release(grant);
          await sim.cluster.clock.sleep(Math.floor(rnd() * 50_000));
        }
      };
    }),
  );

  void (async () => {
    await clock.sleep(failAtNs);
    if (failure === 'switch') sim.sw.restart();
    else {
      dead.add(victim);
      sim.pool(victim).failStop();
      for (const c of clients.get(victim) ?? []) c.abandon(`machine ${victim} failed`);
      monitor.dropHolders((who) => who.startsWith(`${victim}/`));
    }
    await clock.sleep(1_000_000); // detection (heartbeats) before the coordinator acts
    if (!recover) return;
    const survivors = sim.nodes.filter((n) => !dead.has(n));
    outcome = await recoverInProcess({
      epoch: 1,
      survivors: survivors.map((n) => sim.pool(n)),
      failed: [...dead],
      control: controlOf(sim.sw),
      policy: 'read-preferring',
      nowNs: () => clock.nowNs(),
      drain: () => clock.sleep(200_000),
      ...(mutant ? { repair: { mutantKeepFailedParticipants: true } } : {}),
    });
    for (const [lock, who] of monitor.held()) heldAtRecovery.set(lock, who);
    for (const lock of heldAtRecovery.keys()) {
      const meta = sim.decider.meta(lock);
      const agent = outcome.plan.agents.find((a) => a.lid === lock);
      if (!meta.free && agent && meta.mid === agent.machine && meta.mode === agent.mode) restored.push(`${lock}`);
    }
  })();

  const done = Promise.all(workers.map((w) => w()));
  await sim.scheduler.run({ untilNs, maxEvents: 3_000_000 });
  if (untilNs === 5_000_000_000) await done;
  await sim.stop();
  return { violations: monitor.violations, granted, grantedAfterRecovery, aborted, otherErrors, outcome, heldAtRecovery, restored };
}

describe('fisslock recovery S0–S3 in the simulator', () => {
  it.each([1, 2, 3])('switch failure mid-run (seed %i): registers rebuilt for held locks, run completes, exclusion holds', async (seed) => {
    const r = await runWithFailure(seed, 'switch');
    expect(r.outcome?.problems).toEqual([]);
    expect(r.violations).toEqual([]);
    expect(r.otherErrors).toEqual([]);
    expect(r.aborted).toBe(0);
    expect(r.grantedAfterRecovery).toBeGreaterThan(0);
    expect(r.heldAtRecovery.size).toBeGreaterThan(0);
    expect(r.restored.sort()).toEqual([...r.heldAtRecovery.keys()].map(String).sort());
  });

  it.each([1, 2, 3])('compute-node failure mid-run (seed %i): its locks are free again, its waits abort, survivors proceed', async (seed) => {
    const r = await runWithFailure(seed, 'compute');
    expect(r.outcome?.problems).toEqual([]);
    expect(r.violations).toEqual([]);
    expect(r.otherErrors).toEqual([]);
    expect(r.grantedAfterRecovery).toBeGreaterThan(0);
    expect(r.aborted).toBeGreaterThan(0); // the failed node's waiting acquires ended with LockAbortedError
    const participants = r.outcome?.plan.agents.flatMap((a) => [...a.holders, ...a.wqueue].map((p) => p.mid)) ?? [];
    expect(participants).not.toContain(r.outcome?.plan.failed[0]);
    expect(r.outcome?.plan.failed).toHaveLength(1);
    const victim = r.outcome?.plan.failed[0];
    const touched = r.outcome?.reports.flatMap((rep) => rep.agents).some((a) => [...a.holders, ...a.wqueue].some((p) => p.mid === victim) || a.machine === victim);
    expect(touched || (r.outcome?.reports.flatMap((rep) => rep.clients).length ?? 0) > 0).toBe(true);
  });

  it('without S1–S3 the same switch failure stops every grant (the runs above depend on the recovery)', async () => {
    const stalled = await runWithFailure(1, 'switch', false, 30_000_000, false);
    const recovered = await runWithFailure(1, 'switch', false, 30_000_000, true);
    expect(stalled.grantedAfterRecovery).toBe(0);
    expect(recovered.grantedAfterRecovery).toBeGreaterThan(0);
  });

  it('the invariant check catches the repair mutant that keeps the failed node as a participant', async () => {
    // stop right after the recovery: with the mutant, survivors would wait for the dead node forever
    const r = await runWithFailure(1, 'compute', true, 4_500_000);
    expect(r.outcome?.problems.some((p) => p.includes('failed machine'))).toBe(true);
  });
});

describe('fisslock recovery fence', () => {
  it('a node declared dead that comes back cannot change the decider: its packets fall in the gap of its fenced seq window', async () => {
    const sim = fissSim({ seed: 7, locks: 8, computeNodes: 3 });
    const options = readFissLockOptions({ policy: 'read-preferring' });
    const [a, b, c] = sim.nodes as [NodeId, NodeId, NodeId];
    const holderC = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: c, client: 0 }), options);
    const waiterA = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: a, client: 0 }), options);
    const held = holderC.acquire(0, 'exclusive');
    await sim.step();
    const grantC = await held;
    const waiting = waiterA.acquire(0, 'exclusive', { timeoutMs: 500 });
    await sim.step();
    const lastSeqC = sim.sw.readRegister('fisslock.seq', c);
    const spans: string[] = [];
    sim.pool(c).failStop(); // C is declared dead (in reality: paused past detection)
    const outcome = recoverInProcess({
      epoch: 1,
      survivors: [sim.pool(a), sim.pool(b)],
      failed: [c],
      control: controlOf(sim.sw),
      policy: 'read-preferring',
      nowNs: () => sim.cluster.clock.nowNs(),
      drain: () => sim.cluster.clock.sleep(100_000),
      trace: { startSpan: (name) => (spans.push(name), { context: undefined, setAttribute: () => undefined, addLink: () => undefined, recordError: () => undefined, end: () => undefined }) },
    });
    await sim.step();
    expect((await outcome).problems).toEqual([]);
    expect(spans).toEqual(['recovery', 'recovery.S1', 'recovery.S2', 'recovery.S3']);
    const grantA = await waiting;
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'exclusive', mid: a });
    // C wakes up and carries on from where it was: its release (a FREE with its next seq) and a go-back-N resend
    const gapsBefore = sim.sw.counters().decisions['seq-gap'] ?? 0;
    const port = sim.cluster.switchPort(c);
    port.send({ type: 'free', lock: 0, machine: c, task: grantC.task, mode: 'exclusive', incarnation: 0, seq: lastSeqC + 1, flags: 0, agent: c });
    port.send({ type: 'release', lock: 0, machine: c, task: grantC.task, mode: 'exclusive', incarnation: 0, seq: lastSeqC, flags: 0, agent: c });
    await sim.step();
    expect((sim.sw.counters().decisions['seq-gap'] ?? 0) - gapsBefore).toBe(2);
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'exclusive', mid: a });
    expect([...(sim.pool(a).agentOf(0)?.holders ?? [])]).toEqual([`${a}:${grantA.task}`]);
    await waiterA.release(grantA);
    await sim.step();
    expect(sim.decider.meta(0).free).toBe(true);
    await sim.stop();
  });
});

