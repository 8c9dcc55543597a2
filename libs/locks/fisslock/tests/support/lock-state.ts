import type { LockId, NodeId } from '@lockfabric/ports';
import type { LockMeta } from '../../src/switch/index.js';
import type { AgentPool } from '../../src/agent-pool.js';
import { RID_MASK, clientOfTask } from '../../src/wire.js';

/** One machine's view of a lock: its live agent (if any), whether one is pending, unacknowledged packets. */
export interface MachineLockState {
  readonly agent: { readonly mode: 'S' | 'X'; readonly inca: number; readonly holders: readonly string[]; readonly wqueue: readonly string[] } | undefined;
  readonly pending: boolean;
  /** Sequenced packets of the machine still waiting for their ACK (all locks). */
  readonly unacked: number;
}

export interface LockState {
  readonly decider: LockMeta;
  /** By machine letter (A = first compute node). */
  readonly machines: Readonly<Record<string, MachineLockState>>;
}

interface StateSource {
  readonly nodes: readonly NodeId[];
  readonly decider: { meta(lid: number): LockMeta };
  pool(node: NodeId): AgentPool;
}

const letter = (nodes: readonly NodeId[], node: NodeId): string => {
  const at = nodes.indexOf(node);
  return at < 0 ? `m${node}` : String.fromCharCode(65 + at);
};

/** A request as the tests name it: machine letter / client index # request id (`B/1#1`). */
export function requestName(nodes: readonly NodeId[], mid: NodeId, task: number): string {
  return `${letter(nodes, mid)}/${clientOfTask(task)}#${task & RID_MASK}`;
}

/** The decider's registers for `lock` and every machine's agent-pool state for it, with named requests. */
export function lockState(sim: StateSource, lock: LockId): LockState {
  const machines: Record<string, MachineLockState> = {};
  for (const node of sim.nodes) {
    const pool = sim.pool(node);
    const a = pool.agentOf(lock);
    machines[letter(sim.nodes, node)] = {
      agent: a
        ? {
            mode: a.mode === 'shared' ? 'S' : 'X',
            inca: a.inca,
            holders: [...a.holders].map((h) => {
              const [mid, task] = h.split(':').map(Number) as [number, number];
              return requestName(sim.nodes, mid, task);
            }).sort(),
            wqueue: a.wqueue.map((w) => `${requestName(sim.nodes, w.mid, w.task)} ${w.mode === 'shared' ? 'S' : 'X'}`),
          }
        : undefined,
      pending: (pool.pendingAgentOf(lock) !== undefined),
      unacked: pool.link.unacked,
    };
  }
  return { decider: sim.decider.meta(lock), machines };
}

/** A machine with no agent, nothing pending and nothing unacknowledged for the lock. */
export const NO_AGENT: MachineLockState = { agent: undefined, pending: false, unacked: 0 };
