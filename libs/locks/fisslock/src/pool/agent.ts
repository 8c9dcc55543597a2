import type { LockMode, NodeId } from '@lockfabric/ports';

export type FissPolicy = 'read-preferring' | 'starvation-prevention' | 'write-preferring';

export interface Waiter {
  readonly mid: NodeId;
  readonly task: number;
  readonly mode: LockMode;
}

/** One lock's agent (spec §2.2): holders keyed `mid:task`, FIFO wait queue. */
export interface Agent {
  mode: LockMode;
  inca: number;
  readonly holders: Set<string>;
  wqueue: Waiter[];
}

/** The key of a holder or waiter in an agent. */
export const holderKey = (mid: NodeId, task: number): string => `${mid}:${task}`;
