import { BoundedSet } from '@lockfabric/locks-common';
import type { LockId, NodeId } from '@lockfabric/ports';
import { holderKey } from './agent.js';

/**
 * Requests (lock, requester machine, task) a pool remembers, at most `max`: the oldest is forgotten
 * first. A task id names one attempt, so a key never stands for two requests within the bound.
 */
export class RequestKeys {
  private readonly keys: BoundedSet<string>;

  constructor(max: number) {
    this.keys = new BoundedSet(max);
  }

  get size(): number {
    return this.keys.size;
  }

  note(lid: LockId, mid: NodeId, task: number): void {
    this.keys.add(`${lid}:${holderKey(mid, task)}`);
  }

  has(lid: LockId, mid: NodeId, task: number): boolean {
    return this.keys.has(`${lid}:${holderKey(mid, task)}`);
  }
}
