import type { FissSimOptions } from './fiss-sim.js';
import { fissSim } from './fiss-sim.js';
import { checkEndState, NOT_CHECKED } from './end-state.js';
import type { EndState } from './end-state.js';
import { ExclusionMonitor, mulberry, startWorkers } from './workload.js';

export { FAULTS_10 } from './workload.js';

export interface SweepResult {
  readonly violations: string[];
  readonly granted: number;
  readonly failed: number;
  readonly untyped: number;
  readonly agentsPerLockMax: number;
  readonly modeMismatch: number;
  /** Workers still running when the event budget ran out (a stall), with what was pending then. */
  readonly stalled: string | undefined;
  /** The simulation ran out of events: nothing left circling, no retransmission pending. */
  readonly quiescent: boolean;
  /** Acquires that neither were granted nor failed with a typed error. */
  readonly unfinished: number;
  /** The end-state check (end-state.ts); empty when the run did not end quiescent (see `stalled`, `quiescent`). */
  readonly endState: EndState;
}

/**
 * One seed: clients on every compute node take random locks in random modes and release them.
 * Exclusion is checked online (ExclusionMonitor). Also checks one agent per lock and that a live
 * agent's mode equals the decider's (Lemma 1) after every grant.
 */
export async function runSeed(
  seed: number,
  options: FissSimOptions & { clientsPerNode?: number; ops?: number; maxEvents?: number; onSim?: (sim: ReturnType<typeof fissSim>) => void } = {},
): Promise<SweepResult> {
  const sim = fissSim({ seed, locks: options.locks ?? 3, computeNodes: options.computeNodes ?? 3, ...options });
  options.onSim?.(sim);
  const clientsPerNode = options.clientsPerNode ?? 2;
  const ops = options.ops ?? 12;
  const audit = new AgentAudit(sim);
  const monitor = new ExclusionMonitor();
  const { counts, done } = startWorkers({
    nodes: sim.nodes,
    clientsPerNode,
    ops,
    lockCount: options.locks ?? 3,
    timeoutMs: 30,
    rnd: mulberry(seed),
    clock: sim.cluster.clock,
    monitor,
    label: () => `seed ${seed}`,
    client: (node, k) => sim.client(node, k),
    holdNs: (rnd) => Math.floor(rnd() * 5_000),
    onGranted: (lock) => audit.check(lock),
  });
  const outcome = await sim.scheduler.run({ untilNs: 2_000_000_000, maxEvents: options.maxEvents ?? 2_000_000 });
  const stalled = counts.finished ? undefined : describeStall(sim, outcome);
  if (counts.finished) await done;
  const quiescent = outcome.reason === 'idle';
  const endState = counts.finished && quiescent ? checkEndState(sim) : NOT_CHECKED;
  await sim.stop();
  const unfinished = sim.nodes.length * clientsPerNode * ops - counts.granted - counts.timedOut - counts.untyped;
  return { violations: monitor.violations, granted: counts.granted, failed: counts.timedOut, untyped: counts.untyped, agentsPerLockMax: audit.agentsPerLockMax, modeMismatch: audit.modeMismatch, stalled, quiescent, unfinished, endState };
}

/**
 * One agent per lock, and a live agent's mode equals the decider's (Lemma 1), checked at every
 * grant. The agents of a lock are its live agents plus, while the decider holds the lock, the one
 * at `mid` when that machine has no live agent: a pending agent whose FREE / transfer the switch
 * has not decided yet (or refused, the refusal on its way), or an accepted agent GRANT still in
 * flight or assembling there (spec §11 properties 2 and 4). A pending agent on a machine the
 * decider no longer names had its FREE / transfer accepted and only waits for the ACK: it is not
 * an agent any more. So more than one is a live agent away from `mid`, or two live agents.
 */
export class AgentAudit {
  agentsPerLockMax = 0;
  modeMismatch = 0;

  constructor(private readonly sim: ReturnType<typeof fissSim>) {}

  check(lock: number): void {
    if (lock >= this.sim.decider.lockCount()) return; // a fallback (ParLock) lock: no agent, no registers
    const meta = this.sim.decider.meta(lock);
    const at = new Set<number>();
    for (const node of this.sim.nodes) {
      const a = this.sim.pool(node).agentOf(lock);
      if (!a) continue;
      at.add(node);
      if (!meta.free && meta.mid === node && a.mode !== meta.mode) this.modeMismatch++;
    }
    if (!meta.free && meta.mid !== undefined) at.add(meta.mid);
    this.agentsPerLockMax = Math.max(this.agentsPerLockMax, at.size);
  }
}

/** What a stalled run was waiting on: per machine, agents, pending agents, unacknowledged packets and waiting tasks. */
export function describeStall(sim: ReturnType<typeof fissSim>, outcome: unknown): string {
  const lines = [`run ended: ${JSON.stringify(outcome)}`];
  for (const node of sim.nodes) {
    const pool = sim.pool(node);
    const agents = pool.liveAgents().map(([lid, a]) => `${lid}:${a.mode}/inca${a.inca}/h[${[...a.holders].join(',')}]/q[${a.wqueue.map((w) => `${w.mid}:${w.task}${w.mode[0]}`).join(',')}]`);
    lines.push(`node ${node}: agents {${agents.join(' ')}} pending [${[...pool.pendingAgents().map(([lid]) => lid)].join(',')}] unacked ${JSON.stringify(pool.link.outstandingPackets())} listeners [${pool.waitingTasks().join(',')}]`);
  }
  for (let lid = 0; lid < sim.decider.lockCount(); lid++) lines.push(`decider ${lid}: ${JSON.stringify(sim.decider.meta(lid))}`);
  return lines.join('\n');
}
