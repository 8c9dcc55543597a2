import type { NodeId } from '@lockfabric/ports';
import type { LockMeta } from '../switch/index.js';
import type { AgentPool } from '../agent-pool.js';

/** What the end of a run looks like against spec §11 (Lemma 2 and the location rule). */
export interface EndState {
  /** The run ended quiescent with every client done, so the state was checked. */
  readonly checked: boolean;
  /** Broken invariants, one line each. Must be empty. */
  readonly problems: readonly string[];
  /**
   * Locks left held after every client is done, each with its agent where the decider says and in
   * the decider's mode: a lock nobody can take any more. Two causes are known, both found by this
   * check under combined faults: an agent with no holder whose incarnation differs from the
   * decider's (a ② grant the decider counted never reached it — its GRANT and its copy both lost —
   * so every FREE / transfer is refused), and a holder nobody holds (after a long orphaned spell
   * of the lock). Spec §12.9 leaves such locks to a T_STUCK watchdog with a per-lock S1–S3 repair
   * (pool/stuck-watchdog.ts, recovery/lock-repair.ts).
   * They cost liveness (acquires time out), not exclusion; reported apart.
   */
  readonly stuck: readonly string[];
}

export const NOT_CHECKED: EndState = { checked: false, problems: [], stuck: [] };

/** What the check reads: the sim of support/fiss-sim.ts, or a test's stand-in. */
export interface EndStateSource {
  readonly nodes: readonly NodeId[];
  readonly decider: { meta(lid: number): LockMeta; lockCount(): number };
  pool(node: NodeId): AgentPool;
}

/**
 * At quiescence (every client done, the scheduler out of events), spec §11 properties 4 and 5:
 * a free lock has no agent anywhere; a held lock has its agent on the machine the decider's `mid`
 * names, in the decider's mode; no agent is pending (FREE / transfer unconfirmed) or in flight (an
 * agent GRANT still assembling); no packet waits for its ACK and no task for its GRANT. Every
 * client is done, so by Lemma 2 (free ⇔ no holder) every lock should be free: a held one — whatever
 * its holders and incarnations — is listed in `stuck` (see there), the rest in `problems`.
 */
export function checkEndState(sim: EndStateSource): EndState {
  const problems: string[] = [];
  const stuck: string[] = [];
  for (const node of sim.nodes) {
    const pool = sim.pool(node);
    for (const lid of pool.pendingAgents().map(([lid]) => lid)) problems.push(`lock ${lid}: pending agent left on ${node}`);
    if (pool.link.unacked > 0) problems.push(`machine ${node}: ${pool.link.unacked} packets unacknowledged`);
    for (const task of pool.waitingTasks()) problems.push(`machine ${node}: task ${task} still waits for lock ${pool.listenerOf(task)?.lock ?? '?'}`);
  }
  for (let lid = 0; lid < sim.decider.lockCount(); lid++) {
    const meta = sim.decider.meta(lid);
    for (const node of sim.nodes) {
      if (sim.pool(node).awaitingTransfer(lid)) problems.push(`lock ${lid}: agent GRANT on ${node} still waits for its entries`);
      if (!(sim.pool(node).agentOf(lid) !== undefined)) continue;
      if (meta.free) problems.push(`lock ${lid}: agent on ${node} for a free lock`);
      else if (meta.mid !== node) problems.push(`lock ${lid}: agent on ${node}, the decider names ${meta.mid ?? 'none'}`);
    }
    if (meta.free || meta.mid === undefined) continue;
    if (!sim.nodes.includes(meta.mid)) {
      problems.push(`lock ${lid}: held ${meta.mode} at machine ${meta.mid}, which has no agent pool (dead)`);
      continue;
    }
    const a = sim.pool(meta.mid).agentOf(lid);
    if (!a) {
      problems.push(`lock ${lid}: held ${meta.mode} with no agent on ${meta.mid}`);
      continue;
    }
    const what = `lock ${lid} (${meta.mode} at ${meta.mid}, holders [${[...a.holders].join(',')}], queue [${a.wqueue.map((w) => `${w.mid}:${w.task}`).join(',')}])`;
    if (a.mode !== meta.mode) problems.push(`${what}: agent mode ${a.mode} (Lemma 1)`);
    else stuck.push(`${what}: held with every client done, agent inca ${a.inca}, decider ${meta.inca}`);
  }
  return { checked: true, problems, stuck };
}
