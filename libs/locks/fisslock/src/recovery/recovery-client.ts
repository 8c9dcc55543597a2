import { LockAbortedError } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, LockClient, LockId, LockMode } from '@lockfabric/ports';
import type { AgentPool } from '../agent-pool.js';
import { FissLockClient } from '../client.js';
import type { FissGrant } from '../client.js';
import type { FissLockOptions } from '../options.js';
import { agentPoolFor } from '../registry.js';
import { clientOfTask } from '../wire.js';
import type { ClientRecord } from './recovery-state.js';

/** What S1 asks of a client, and how S2 fails its dropped requests. */
export interface RecoveryClientView {
  recoveryRecords(): ClientRecord[];
  recoveryAbort(lid: LockId, task: number, reason: string): void;
}

interface Current {
  readonly lock: LockId;
  readonly mode: LockMode;
  readonly startNs: number;
  readonly controller: AbortController;
}

/**
 * A FissLock client that keeps the client state recovery needs (spec §2.3): the locks it holds,
 * and the request it waits for. The plain client keeps neither, so this wraps it and registers
 * with the machine's agent pool; the task key of the waiting attempt is read from the pool's
 * listeners (the newest request id of this client is the live attempt, older ones were given up).
 * A request S2 drops is failed with LockAbortedError.
 */
export class RecoverableFissLockClient implements LockClient<FissGrant>, RecoveryClientView {
  private readonly inner: FissLockClient;
  private readonly pool: AgentPool;
  private readonly held = new Map<number, FissGrant>();
  private current: Current | undefined;
  private closed = false;

  constructor(
    private readonly ports: ClientPorts,
    options: FissLockOptions,
  ) {
    this.inner = new FissLockClient(ports, options);
    this.pool = agentPoolFor(ports, options);
    this.pool.recoveryClients.add(this);
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<FissGrant> {
    const controller = new AbortController();
    const outer = options?.signal;
    const forward = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    outer?.addEventListener('abort', forward);
    this.current = { lock, mode, startNs: this.ports.clock.nowNs(), controller };
    try {
      const grant = await this.inner.acquire(lock, mode, { ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }), signal: controller.signal });
      this.held.set(grant.task, grant);
      return grant;
    } finally {
      this.current = undefined;
      outer?.removeEventListener('abort', forward);
    }
  }

  async release(grant: FissGrant): Promise<void> {
    this.held.delete(grant.task);
    await this.inner.release(grant);
  }

  /** The machine failed: the waiting request ends with LockAbortedError; nothing is sent. */
  abandon(reason: string): void {
    this.closed = true;
    this.pool.recoveryClients.delete(this);
    this.current?.controller.abort(new LockAbortedError(this.current.lock, reason));
  }

  recoveryRecords(): ClientRecord[] {
    if (this.closed) return [];
    const mid = this.pool.machine;
    const out: ClientRecord[] = [...this.held.values()].map((g) => ({ lid: g.lock, mid, task: g.task, mode: g.mode, state: 'granted', startNs: 0 }));
    const current = this.current;
    if (!current) return out;
    const mine = [...this.pool.listeners.keys()].filter((task) => clientOfTask(task) === this.ports.self.client).sort((a, b) => a - b);
    mine.forEach((task, i) => {
      const state = i === mine.length - 1 ? 'pending' : 'aborting';
      out.push({ lid: current.lock, mid, task, mode: current.mode, state, startNs: current.startNs });
    });
    return out;
  }

  recoveryAbort(lid: LockId, task: number, reason: string): void {
    const current = this.current;
    const mine = [...this.pool.listeners.keys()].filter((t) => clientOfTask(t) === this.ports.self.client);
    // only the live attempt can be failed; given-up attempts have nobody waiting on them
    if (current && current.lock === lid && mine.every((t) => t < task)) current.controller.abort(new LockAbortedError(lid, reason));
  }
}
