import type { LockMode, NodeId } from '@lockfabric/ports';

export type FissPolicy = 'read-preferring' | 'starvation-prevention' | 'write-preferring';

/** A request in an agent's wait queue (the agent itself is AgentValue, pool/agent-state.ts). */
export interface Waiter {
  readonly mid: NodeId;
  readonly task: number;
  readonly mode: LockMode;
}

/** The key of a holder or waiter in an agent. */
export const holderKey = (mid: NodeId, task: number): string => `${mid}:${task}`;
