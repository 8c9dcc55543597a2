import { AcquireDeadline, AcquireSpan, LOCK_ATTR, TruncatedBackoff } from '@lockfabric/locks-common';
import type { SpanContextRef } from '@lockfabric/ports';
import { GrantNotHeldError, InvariantError, TableLostError, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, NodeId } from '@lockfabric/ports';
import { raceDeadline } from './acquire-race.js';
import { CnClock } from './clock-sync.js';
import { recordGrantSpan } from './grant-span.js';
import { computeNodesIn, perComputeNode } from './cn-registry.js';
import type { CqlContext } from './cql-context.js';
import type { CqlEngine, CqlStats } from './cql-engine.js';
import { LocalLock, LocalWaiter } from './local-lock.js';
import type { WakeResult } from './local-lock.js';
import { localGrantLimit } from './options.js';
import type { HierarchicalOptions } from './options.js';
import { earlier } from './timestamp.js';

export interface HierarchicalGrant extends Grant {
  readonly local: LocalLock;
}

/** A compute node's share of the hierarchical lock: its local lock table and its clock. */
export class ComputeNodeLocks {
  readonly locks = new Map<LockId, LocalLock>();
  /** Local handoffs made without the CQL lock changing hands. */
  localHandoffs = 0;

  constructor(readonly clock: CnClock) {}

  /**
   * A restarted memory node's locks start afresh on this node (§4.6): new acquires get new local
   * locks; clients still queued on the old ones fail TABLE_LOST, and holders find theirs lost.
   */
  dropTable(memoryNode: NodeId, memoryNodeOf: (lock: LockId) => NodeId): void {
    for (const [lock, local] of [...this.locks]) {
      if (memoryNodeOf(lock) !== memoryNode) continue;
      this.locks.delete(lock);
      local.lost = true;
      for (const waiter of local.wq.splice(0)) waiter.wake({ kind: 'table-lost' });
    }
  }

  /**
   * The node's CQL hold of `lock` was reset past (its holder presumed crashed): new acquires get a
   * new local lock; its waiters start again there. Holders of the old one still release through it.
   */
  dropLock(lock: LockId, local: LocalLock): void {
    if (this.locks.get(lock) !== local) return;
    this.locks.delete(lock);
    for (const waiter of local.wq.splice(0)) waiter.wake({ kind: 'retry' });
  }

  local(lock: LockId): LocalLock {
    let entry = this.locks.get(lock);
    if (!entry) {
      entry = new LocalLock();
      this.locks.set(lock, entry);
    }
    return entry;
  }
}

interface Abandonable {
  abandoned: boolean;
  /** Takes a not-yet-woken local waiter out of the queue; true when it worked. */
  leave?: () => boolean;
}

/**
 * DecLock's timestamp-based hierarchical lock (paper §5, Fig. 10): clients of one compute node
 * settle among themselves through a local lock, and one owner per node holds a CQL entry. A local
 * handoff needs matching modes and a local waiter earlier than every remote waiter (`rts`);
 * otherwise the CQL lock is released so remote waiters go first. Task-fair (tf) or phase-fair (pf).
 */
export class HierarchicalClient implements LockClient<HierarchicalGrant> {
  private readonly engine: CqlEngine;
  private readonly node: ComputeNodeLocks;
  private readonly backoff: TruncatedBackoff;
  /** Local grants per CQL ownership under a non-timestamp handoff policy (Fig. 14); undefined: timestamps decide. */
  private readonly grantLimit: number | undefined;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: HierarchicalOptions,
    private readonly protocol: string,
    private readonly context: CqlContext,
  ) {
    this.engine = context.engine;
    this.node = perComputeNode(
      ports.locks,
      `${context.scopeKey}/local`,
      ports.self.node,
      () => {
        const node = new ComputeNodeLocks(new CnClock(ports.clock, { periodNs: options.syncPeriodNs, timeoutNs: options.syncTimeoutNs }));
        context.signals.onTableLost((memoryNode) => node.dropTable(memoryNode, (lock) => lockAddress(ports.locks, lock).node));
        return node;
      },
    );
    this.backoff = new TruncatedBackoff(ports.random, { initialNs: options.retryBackoffInitialNs, maxNs: options.retryBackoffMaxNs, factor: 2 });
    this.grantLimit = localGrantLimit(options);
  }

  get stats(): CqlStats {
    return this.engine.stats;
  }

  get computeNode(): ComputeNodeLocks {
    return this.node;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<HierarchicalGrant> {
    const { clock } = this.ports;
    const deadline = new AcquireDeadline(clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, clock, this.protocol, lock, mode, clientKey(this.ports.self));
    try {
      // A restarted memory node's locks are reset on this node before any new operation (§4.6).
      this.engine.followTables();
      deadline.check();
      const token: Abandonable = { abandoned: false };
      const work = this.acquireLocal(lock, mode, op, token);
      const raced = await raceDeadline(work, clock, deadline, options?.signal);
      if (raced.settled) {
        if (!raced.value) throw new InvariantError('declock', 'an acquire ended without a grant');
        op.granted();
        return raced.value;
      }
      token.abandoned = true;
      if (!token.leave?.()) void work.then((grant) => (grant ? this.release(grant) : undefined)).catch(() => undefined);
      throw raced.error;
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  async release(grant: HierarchicalGrant): Promise<void> {
    const local = grant.local;
    await local.mtx.lock();
    if (local.lost || this.engine.tableLost()) return this.releaseLost(grant, local);
    if (local.holders > 1) {
      local.holders--;
      local.mtx.unlock();
      return;
    }
    const hold = local.cql;
    if (!hold) {
      local.mtx.unlock();
      throw new GrantNotHeldError(grant.lock, 'this node holds no CQL lock for it');
    }
    if (local.wq.length === 0) {
      // Last holder, nobody waiting here: release the CQL lock with the mutex held (newcomers wait briefly).
      try {
        await this.engine.release(hold);
      } finally {
        local.cql = undefined;
        local.state = 'free';
        local.holders = 0;
        local.rts = undefined;
        local.mtx.unlock();
      }
      return;
    }
    const next = this.select(local);
    if (this.localHandoffAllowed(local, next)) {
      local.remove(next);
      local.state = next.mode === 'exclusive' ? 'exclusive' : 'shared';
      const span = this.ports.trace.startSpan('lock.handover', {
        attributes: { [LOCK_ATTR.protocol]: this.protocol, [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.client]: clientKey(this.ports.self), 'declock.handover.local': true },
      });
      next.wake({ kind: 'granted', handover: span.context });
      span.end();
      this.node.localHandoffs++;
      local.localGrants++;
      if (next.mode === 'shared') this.shareWithReaders(local);
      if (local.hasWaitingWriter()) local.state = 'exclusive';
      local.mtx.unlock();
      return;
    }
    // Remote waiters go first: give up the CQL lock; `next` takes it again for this node.
    local.remove(next);
    local.state = 'pending';
    local.rts = undefined;
    local.cql = undefined;
    local.mtx.unlock();
    try {
      await this.engine.release(hold);
    } finally {
      next.wake({ kind: 'reacquire' });
    }
  }

  /**
   * A release after the memory node restarted: the hold went with the table, so no local handoff
   * may pass it on (it would be a grant on a lock the new table may have given to another node).
   * The next local waiter, if any, takes the CQL lock afresh; the release fails TABLE_LOST.
   * Called with the mutex held.
   */
  private releaseLost(grant: HierarchicalGrant, local: LocalLock): never {
    if (local.holders > 1) {
      local.holders--;
    } else {
      local.cql?.membership?.leave();
      local.cql = undefined;
      local.rts = undefined;
      const next = local.wq.shift();
      local.state = next ? 'pending' : 'free';
      local.holders = next ? 1 : 0;
      next?.wake({ kind: 'reacquire' });
    }
    local.mtx.unlock();
    throw new TableLostError(grant.lock, 'the memory node restarted while the lock was held');
  }

  private async acquireLocal(lock: LockId, mode: LockMode, op: AcquireSpan, token: Abandonable): Promise<HierarchicalGrant | undefined> {
    const ts = this.node.clock.ts16();
    this.maybeSyncClock();
    const local = this.node.local(lock);
    await local.mtx.lock();
    if (token.abandoned) {
      local.mtx.unlock();
      return undefined;
    }
    if (local.lost || this.engine.tableLost()) {
      local.mtx.unlock();
      throw new TableLostError(lock, 'the memory node restarted before this acquire took the lock');
    }
    if (mode === 'shared' && local.state === 'shared' && this.mayJoinShared(lock, local, ts)) {
      local.holders++;
      local.localGrants++;
      local.mtx.unlock();
      return { lock, mode, local };
    }
    if (local.state !== 'free') {
      if (mode === 'exclusive' && local.state === 'shared') local.state = 'exclusive';
      const waiter = new LocalWaiter(mode, ts);
      local.wq.push(waiter);
      local.mtx.unlock();
      token.leave = () => this.leave(local, waiter);
      if (local.rts === undefined) {
        // Prefetch the remote waiters' earliest timestamp (one READ of header + queue).
        // Only a hint: a failed READ (memory node down) leaves it unknown. Throwing here would leave
        // this waiter in the queue, and a turn passed to it later would be lost.
        const prefetch = this.engine.prefetchRemoteTs(lock, op);
        const remote = this.options.mutantKeepTurnOnFailure ? await prefetch : await prefetch.catch(() => undefined);
        if (local.rts === undefined) local.rts = remote;
      }
      const woken = await this.waitLocally(lock, local, waiter, op);
      if (woken.kind === 'withdrawn') return undefined;
      if (woken.kind === 'retry') return token.abandoned ? undefined : this.acquireLocal(lock, mode, op, token);
      if (woken.kind === 'table-lost') throw new TableLostError(lock, 'the memory node restarted while this acquire waited on its node');
      if (woken.kind === 'granted') {
        if (woken.handover) this.linkHandover(woken.handover, lock, mode, op, token);
        return { lock, mode, local };
      }
      // reacquire: this client now owns the node's turn (holders already counts it).
    } else {
      local.state = 'pending';
      local.holders = 1;
      local.rts = undefined;
      local.mtx.unlock();
    }
    return this.takeCql(lock, mode, ts, local, op, token);
  }

  /**
   * Waits to be woken. A local holder that crashed never wakes anyone, and no remote waiter may
   * come to reset the lock: after a whole acquire timeout the waiter resets its own node's CQL
   * hold (§4.4; the drain declares the silent member failed after suspectAfterNs, so only with a
   * finite one), and once that hold is void the node's local lock is dropped and its waiters
   * start again.
   */
  private async waitLocally(lock: LockId, local: LocalLock, waiter: LocalWaiter, op: AcquireSpan): Promise<WakeResult> {
    // Without a finite suspicion a reset never gets past a crashed holder: nothing to gain.
    if (this.options.mutantNoLocalRecovery || !Number.isFinite(this.options.suspectAfterNs)) return waiter.result;
    for (;;) {
      const woken = await Promise.race([waiter.result, this.ports.clock.sleep(this.engine.timeoutNs).then(() => undefined)]);
      if (woken) return woken;
      const hold = local.cql;
      if (!hold || waiter.woken || this.node.locks.get(lock) !== local) continue;
      if ((await this.engine.resetStuckHold(hold, op).catch(() => false)) && local.cql === hold) this.node.dropLock(lock, local);
    }
  }

  /** Lines 12–18 of Fig. 10: obtain the CQL lock for the node, then share it with local readers. */
  private async takeCql(lock: LockId, mode: LockMode, ts: number, local: LocalLock, op: AcquireSpan, token: Abandonable): Promise<HierarchicalGrant | undefined> {
    this.backoff.reset();
    for (;;) {
      let attempt: Awaited<ReturnType<CqlEngine['acquire']>>;
      try {
        attempt = await this.engine.acquire(lock, mode, ts, op);
      } catch (error) {
        // A failed verb (memory node down or restarted): the node's turn passes on, or ends.
        if (!this.options.mutantKeepTurnOnFailure) await this.abdicate(local);
        throw error;
      }
      if (attempt.ok) {
        await local.mtx.lock();
        local.cql = attempt.hold;
        local.rts = attempt.remoteTs;
        local.localGrants = 0;
        local.state = mode === 'exclusive' ? 'exclusive' : 'shared';
        if (mode === 'shared') this.shareWithReaders(local);
        if (local.hasWaitingWriter()) local.state = 'exclusive';
        local.mtx.unlock();
        if (attempt.handover) this.linkHandover(attempt.handover, lock, mode, op, token);
        return { lock, mode, local };
      }
      // Aborted by a reset: keep local ownership and retry, unless the caller is gone.
      op.retries++;
      if (token.abandoned) {
        await this.abdicate(local);
        return undefined;
      }
      if (attempt.backoff) {
        try {
          await this.engine.waitForResetEnd(lock, op, () => this.backoff.nextDelayNs());
        } catch (error) {
          if (!this.options.mutantKeepTurnOnFailure) await this.abdicate(local);
          throw error;
        }
      }
    }
  }

  /** The receiving side of a handover: a lock.grant child of the releaser's span, and a link from the acquire. */
  private linkHandover(handover: SpanContextRef, lock: LockId, mode: LockMode, op: AcquireSpan, token: Abandonable): void {
    recordGrantSpan(this.ports.trace, handover, this.protocol, lock, mode, clientKey(this.ports.self));
    if (!token.abandoned) op.span.addLink(handover);
  }

  /** Readers in the wait queue that may join a SHARED hold (lines 16–17 of Fig. 10). */
  private shareWithReaders(local: LocalLock): void {
    if (this.resetSeen(local)) return;
    const { policy, mutantShareWithWriters, mutantIgnoreTimestamps } = this.options;
    for (const waiter of [...local.wq]) {
      if (waiter.mode === 'exclusive' && !mutantShareWithWriters) {
        if (policy === 'tf') break;
        continue;
      }
      if (this.grantLimit !== undefined) {
        if (local.localGrants >= this.grantLimit) break;
      } else if (policy === 'tf' && !mutantIgnoreTimestamps && local.rts !== undefined && earlier(local.rts, waiter.ts)) break;
      local.remove(waiter);
      local.holders++;
      local.localGrants++;
      waiter.wake({ kind: 'granted', handover: undefined });
    }
  }

  /** The waiter the last local holder considers next (line 24). */
  private select(local: LocalLock): LocalWaiter {
    const front = local.wq[0] as LocalWaiter;
    if (this.options.policy === 'pf' && local.cql?.mode === 'exclusive' && !this.localHandoffAllowed(local, front)) {
      return local.wq.find((waiter) => waiter.mode === 'shared') ?? front;
    }
    return front;
  }

  /** Line 25: same mode as the CQL hold, and earlier than every known remote waiter (or, under a bounded policy, grants left). */
  private localHandoffAllowed(local: LocalLock, waiter: LocalWaiter): boolean {
    if (!local.cql || waiter.mode !== local.cql.mode || this.resetSeen(local)) return false;
    if (this.grantLimit !== undefined) return local.localGrants < this.grantLimit;
    return this.options.mutantIgnoreTimestamps || local.rts === undefined || earlier(waiter.ts, local.rts);
  }

  private mayJoinShared(lock: LockId, local: LocalLock, ts: number): boolean {
    if (this.resetSeen(local)) return false;
    if (this.grantLimit !== undefined) return local.localGrants < this.grantLimit;
    if (this.options.paperLiteralSharedAdmission || this.options.mutantIgnoreTimestamps) return true;
    return local.rts === undefined || earlier(ts, local.rts);
  }

  /** Spec §7.17: once a RESET of the node's CQL epoch is seen, no more grants on that ownership. */
  private resetSeen(local: LocalLock): boolean {
    return local.cql !== undefined && this.context.signals.resetSeen(local.cql.lock, local.cql.epoch);
  }

  /** A caller gave up while queued locally: leave the queue if nobody woke us yet. */
  private leave(local: LocalLock, waiter: LocalWaiter): boolean {
    if (waiter.woken || !local.remove(waiter)) return false;
    if (waiter.mode === 'exclusive' && local.state === 'exclusive' && local.cql?.mode === 'shared' && !local.hasWaitingWriter()) local.state = 'shared';
    waiter.wake({ kind: 'withdrawn' });
    return true;
  }

  /** The owner's caller gave up before the CQL lock came: pass the duty on, or free the entry. */
  private async abdicate(local: LocalLock): Promise<void> {
    await local.mtx.lock();
    const next = local.wq.shift();
    if (!next) {
      local.state = 'free';
      local.holders = 0;
      local.rts = undefined;
    }
    local.mtx.unlock();
    next?.wake({ kind: 'reacquire' });
  }

  private maybeSyncClock(): void {
    const clock = this.node.clock;
    if (!clock.due()) return;
    const nodes = this.options.syncNodes || computeNodesIn(this.ports.locks, `${this.context.scopeKey}/local`);
    void clock.sync(this.ports.verbs, this.context.table.syncCounter(), nodes).catch(() => undefined);
  }
}
