import { LeaseExpiredError, LockAbortedError, Stopper } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, LockClient, LockId, LockMode } from '@lockfabric/ports';
import type { AgentPool } from '../agent-pool.js';
import { FissLockClient } from '../client.js';
import type { FissGrant } from '../client.js';
import type { FissLockOptions } from '../options.js';
import { agentPoolFor } from '../registry.js';
import { clientOfTask } from '../wire.js';
import type { PausableRecoveryClient } from './machine-recovery.js';
import { RecoveryHold } from './recovery-hold.js';
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
  /** Ends the inner acquire: the caller's abort, S2 dropping the request, or abandon. */
  readonly stopper: Stopper;
}

/**
 * A FissLock client that keeps the client state recovery needs (spec §2.3): the locks it holds,
 * and the request it waits for. The plain client keeps neither, so this wraps it and registers
 * with the machine's agent pool; the task key of the waiting attempt is read from the pool's
 * listeners (the newest request id of this client is the live attempt, older ones were given up).
 * A request S2 drops is failed with LockAbortedError.
 *
 * While its machine is paused for recovery (S1 to S2) it holds still: new acquires and releases
 * wait, and the inner client's attempt timers (it runs on a clock wrapped by {@link RecoveryHold})
 * do not fire, so nothing changes between the S1 report and the S2 orders built from it. An
 * acquire can therefore overrun its timeout by the length of S1–S2.
 */
export class RecoverableFissLockClient implements LockClient<FissGrant>, RecoveryClientView, PausableRecoveryClient {
  private readonly inner: FissLockClient;
  private readonly pool: AgentPool;
  private readonly held = new Map<number, FissGrant>();
  private readonly hold = new RecoveryHold();
  private current: Current | undefined;
  private closed = false;
  /** Why this client was abandoned (its machine failed or was declared failed). */
  private abandonedFor: string | undefined;

  constructor(
    private readonly ports: ClientPorts,
    options: FissLockOptions,
  ) {
    // the pool (shared by the machine) keeps the real clock; only this client's attempts pause
    this.pool = agentPoolFor(ports, options);
    this.inner = new FissLockClient({ ...ports, clock: this.hold.clock(ports.clock) }, options);
    this.pool.addRecoveryClient(this);
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<FissGrant> {
    if (this.hold.closed) await this.hold.whenOpen(options?.signal);
    if (this.abandonedFor !== undefined) throw new LockAbortedError(lock, this.abandonedFor);
    // one per acquire, so a Stopper (listeners called in the same order as an AbortController's)
    const stopper = new Stopper();
    const outer = options?.signal;
    const forward = (): void => stopper.stop(outer?.reason);
    if (outer?.aborted) forward();
    outer?.addEventListener('abort', forward);
    this.current = { lock, mode, startNs: this.ports.clock.nowNs(), stopper };
    try {
      const grant = await this.inner.acquire(lock, mode, { ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }), signal: stopper });
      this.held.set(grant.task, grant);
      return grant;
    } finally {
      this.current = undefined;
      outer?.removeEventListener('abort', forward);
    }
  }

  async release(grant: FissGrant): Promise<void> {
    if (this.hold.closed) await this.hold.whenOpen();
    // the hold ended when the machine was declared failed; the lock may be someone else's by now
    if (this.abandonedFor !== undefined && this.held.delete(grant.task)) throw new LeaseExpiredError(grant.lock, 0);
    this.held.delete(grant.task);
    await this.inner.release(grant);
  }

  /**
   * The machine failed, or was declared failed (see fenceMachine): the waiting request ends with
   * LockAbortedError, and so does every later acquire; a hold from before is released with
   * LeaseExpiredError; nothing is sent.
   */
  abandon(reason: string): void {
    this.closed = true;
    this.abandonedFor = reason;
    this.pool.removeRecoveryClient(this);
    this.hold.open();
    this.current?.stopper.stop(new LockAbortedError(this.current.lock, reason));
  }

  recoveryPause(): void {
    this.hold.close();
  }

  recoveryResume(): void {
    this.hold.open();
  }

  recoveryRecords(): ClientRecord[] {
    if (this.closed) return [];
    const mid = this.pool.machine;
    const out: ClientRecord[] = [...this.held.values()].map((g) => ({ lid: g.lock, mid, task: g.task, mode: g.mode, state: 'granted', startNs: 0 }));
    const current = this.current;
    const mine = this.pool.waitingTasks().filter((task) => clientOfTask(task) === this.ports.self.client).sort((a, b) => a - b);
    mine.forEach((task, i) => {
      const live = current !== undefined && i === mine.length - 1;
      // a given-up attempt may be of an earlier acquire: its own lock, as its listener says
      const lid = live ? current.lock : (this.pool.listenerOf(task)?.lock ?? current?.lock);
      if (lid === undefined) return;
      out.push({ lid, mid, task, mode: live || lid === current?.lock ? (current?.mode ?? 'exclusive') : 'exclusive', state: live ? 'pending' : 'aborting', startNs: current?.startNs ?? 0 });
    });
    return out;
  }

  recoveryAbort(lid: LockId, task: number, reason: string): void {
    const current = this.current;
    const mine = this.pool.waitingTasks().filter((t) => clientOfTask(t) === this.ports.self.client);
    // only the live attempt can be failed; given-up attempts have nobody waiting on them
    if (current && current.lock === lid && mine.every((t) => t < task)) current.stopper.stop(new LockAbortedError(lid, reason));
  }
}
