import { AcquireDeadline, AcquireSpan, LOCK_ATTR, OptionReader, WordReconciler, isUncertain } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { FREE, holderTag, tagNode } from '@lockfabric/lock-caslock';
import { Stopper, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, RemoteAddr, StopSignal } from '@lockfabric/ports';
import { localLock } from './local-table.js';
import type { LocalLock, LocalWaiter } from './local-table.js';

/** Why a local wait's timer was stopped (nothing reads it). */
const LOCAL_WAIT_OVER = 'local wait over';

export interface ShermanOptions {
  /** true: Sherman (local lock table per compute node); false: Sherman-NH, the plain CAS lock. */
  readonly hierarchy: boolean;
  /** Consecutive local handovers before the global word is released for other nodes. */
  readonly maxLocalHandovers: number;
  /** Pause between two failed CAS attempts on the global word (0: retry at once). */
  readonly retryPauseNs: number;
  /** Test-only mutant: a handover beyond the bound releases the global word but hands over anyway. */
  readonly mutantHandOverAfterRemoteRelease: boolean;
  /** Test-only mutant: after a verb fails `unreachable`, never read the global word back. */
  readonly mutantNoReadBack: boolean;
}

export const SHERMAN_OPTION_HELP = {
  hierarchy: 'true (default): Sherman, a local lock table per compute node in front of the CAS word; false: Sherman-NH, the plain CAS lock',
  maxLocalHandovers: 'consecutive handovers on one compute node before the global word is released (default 4)',
  retryPauseNs: 'ns between two failed CAS attempts on the global word (default 0: retry at once)',
  mutantHandOverAfterRemoteRelease: 'test-only: release the global word and still hand over locally (broken on purpose)',
  mutantNoReadBack: 'test-only: never read the global word back after a verb failed unreachable (leaks locks on lost completions)',
};

export function readShermanOptions(options?: ProtocolOptions): ShermanOptions {
  const reader = new OptionReader('sherman', options);
  const parsed: ShermanOptions = {
    hierarchy: reader.boolean('hierarchy', true),
    maxLocalHandovers: reader.number('maxLocalHandovers', 4, { min: 0, integer: true }),
    retryPauseNs: reader.number('retryPauseNs', 0, { min: 0 }),
    mutantHandOverAfterRemoteRelease: reader.boolean('mutantHandOverAfterRemoteRelease', false),
    mutantNoReadBack: reader.boolean('mutantNoReadBack', false),
  };
  reader.done();
  return parsed;
}

interface ShermanGrant extends Grant {
  readonly addr: RemoteAddr;
  /** Sherman's lock is a mutex: shared acquires are held exclusively. */
  readonly heldAs: 'exclusive';
}

/**
 * Sherman's hierarchical lock (Sherman, SIGMOD'22; the baseline of DecLock's Sherman experiment, Fig. 17 right): one
 * 8-byte CAS word per lock on the memory node, and a lock table on each compute node in front of
 * it. A client first owns its node's local entry; only the local owner CASes the global word, and
 * while local clients wait the global word is kept and the lock handed over locally (no verbs) up
 * to `maxLocalHandovers` times in a row. Uncontended: one CAS to acquire, one WRITE to release.
 * Sherman keeps the word in the memory NIC's on-chip memory; the emulated fabric has no such
 * memory, so here it is an ordinary lock-table word in host memory (README "On-chip memory").
 *
 * Lost completions: a CAS or release WRITE on the global word that fails `unreachable` may have
 * run. The word's tag names a client, hence its node: the word is read back once the link is up
 * and a hold that no one believes they have is given up (per client for Sherman-NH; per node with
 * the hierarchy, where the word is the node's while `remoteHeld`). A later acquire that finds its
 * own tag (NH) or its node's (hierarchy, with `remoteHeld` unset) holds the word.
 */
export class ShermanClient implements LockClient<ShermanGrant> {
  private readonly tag: bigint;
  private readonly key: string;
  /** Sherman-NH's read-back of words this client left uncertain (the hierarchy keeps one per local entry). */
  private readonly readBack: WordReconciler;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: ShermanOptions,
  ) {
    this.tag = holderTag(ports.self);
    this.key = clientKey(ports.self);
    this.readBack = new WordReconciler(ports.verbs, ports.clock);
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<ShermanGrant> {
    const addr = lockAddress(this.ports.locks, lock);
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'sherman', lock, mode, this.key);
    try {
      deadline.check();
      if (!this.options.hierarchy) await this.takeFlat(addr, lock, deadline, op);
      else await this.takeHierarchical(addr, lock, deadline, op);
      op.granted();
      return { lock, mode, addr, heldAs: 'exclusive' };
    } catch (error) {
      if (!this.options.hierarchy) this.readBackFlat(error, addr, lock);
      op.failed(error);
      throw error;
    }
  }

  async release(grant: ShermanGrant): Promise<void> {
    const span = this.ports.trace.startSpan('lock.release', {
      attributes: { [LOCK_ATTR.protocol]: 'sherman', [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: this.key },
    });
    try {
      if (!this.options.hierarchy) await this.releaseGlobal(grant.addr, grant.lock);
      else await this.passLocalLock(this.local(grant.lock), grant.addr, grant.lock);
    } catch (error) {
      if (!this.options.hierarchy) this.readBackFlat(error, grant.addr, grant.lock);
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  private local(lock: LockId): LocalLock {
    return localLock(this.ports.locks, this.ports.self.node, lock);
  }

  /** Own the local entry (at once, or by a local handover), then the global word unless the node already holds it. */
  private async takeHierarchical(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    const local = this.local(lock);
    if (local.held) await this.waitLocally(local, deadline, op);
    else local.held = true;
    if (local.remoteHeld) return;
    try {
      const settling = local.readBack?.takeOver(addr);
      if (settling) await settling;
      // With `remoteHeld` unset no client of this node holds the word, so this node's tag in it is
      // a hold left by a lost completion: the local owner takes it as its own.
      await this.takeGlobal(addr, lock, deadline, op, (word) => tagNode(word) === this.ports.self.node);
      local.remoteHeld = true;
      local.handovers = 0;
    } catch (error) {
      // Gave up (or a verb failed) while owning the local entry: the next local waiter tries.
      this.readBackLocal(error, local, addr, lock);
      this.passOwnership(local);
      throw error;
    }
  }

  private async takeFlat(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    const settling = this.readBack.takeOver(addr);
    if (settling) await settling;
    await this.takeGlobal(addr, lock, deadline, op, (word) => word === this.tag);
  }

  /** Sherman-NH: after a verb that may have run, read the word back and give up this client's tag. */
  private readBackFlat(error: unknown, addr: RemoteAddr, lock: LockId): void {
    if (!isUncertain(error) || this.options.mutantNoReadBack) return;
    this.readBack.reconcile({ addr, lock, mine: (word) => word === this.tag, without: () => FREE });
  }

  /** Hierarchy: the node's tag is given up only while no local client owns the entry (one that does takes it over). */
  private readBackLocal(error: unknown, local: LocalLock, addr: RemoteAddr, lock: LockId): void {
    if (!isUncertain(error) || this.options.mutantNoReadBack) return;
    local.readBack ??= new WordReconciler(this.ports.verbs, this.ports.clock);
    const node = this.ports.self.node;
    local.readBack.reconcile({ addr, lock, mine: (word) => tagNode(word) === node && !local.held, without: () => FREE });
  }

  /** Queue on the local entry until a releaser hands it over, or the deadline passes. */
  private async waitLocally(local: LocalLock, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    let wake!: () => void;
    const handed = new Promise<void>((resolve) => (wake = resolve));
    const waiter: LocalWaiter = { handed: false, wake: () => wake() };
    local.waiters.push(waiter);
    // One per wait, so a Stopper rather than an AbortController; the caller's signal stops it too
    // (in place of AbortSignal.any, which would need a real AbortSignal per wait).
    const timer = new Stopper();
    const caller = deadline.signal;
    const forward = () => timer.stop(caller?.reason);
    if (caller?.aborted) forward();
    else caller?.addEventListener('abort', forward, { once: true });
    try {
      if (deadline.remainingNs() === Infinity) await Promise.race([handed, abortedPromise(timer)]);
      else await Promise.race([handed, this.ports.clock.sleep(deadline.remainingNs(), timer).catch(() => undefined)]);
    } finally {
      caller?.removeEventListener('abort', forward);
      timer.stop(LOCAL_WAIT_OVER);
    }
    if (waiter.handed) return;
    local.waiters.splice(local.waiters.indexOf(waiter), 1);
    op.retries++;
    deadline.check();
    throw new RangeError('sherman local wait ended without a handover or a deadline');
  }

  /**
   * Release: hand the local entry to the next local waiter while the bound allows (no verb);
   * otherwise WRITE the global word free first, and let the next local waiter CAS it again.
   */
  private async passLocalLock(local: LocalLock, addr: RemoteAddr, lock: LockId): Promise<void> {
    if (local.waiters.length > 0 && local.remoteHeld && local.handovers < this.options.maxLocalHandovers) {
      local.handovers++;
      this.passOwnership(local);
      return;
    }
    if (local.remoteHeld) {
      local.remoteHeld = false;
      local.handovers = 0;
      try {
        await this.releaseGlobal(addr, lock);
      } catch (error) {
        this.readBackLocal(error, local, addr, lock);
        throw error;
      } finally {
        // The mutant keeps believing the node holds the word it just freed.
        if (this.options.mutantHandOverAfterRemoteRelease && local.waiters.length > 0) local.remoteHeld = true;
        this.passOwnership(local);
      }
      return;
    }
    this.passOwnership(local);
  }

  /** The local entry goes to the first waiter, or becomes free. */
  private passOwnership(local: LocalLock): void {
    const next = local.waiters.shift();
    if (!next) {
      local.held = false;
      return;
    }
    next.handed = true;
    next.wake();
  }

  /** CAS the tag into a free word; `ours` says which taken word is already this client's (a lost completion). */
  private async takeGlobal(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan, ours: (word: bigint) => boolean): Promise<void> {
    for (;;) {
      op.verbs++;
      const old = await this.ports.verbs.cas(addr, FREE, this.tag, { lock });
      if (old === FREE || (!this.options.mutantNoReadBack && ours(old))) return;
      op.retries++;
      if (this.options.retryPauseNs > 0) await deadline.pause(this.options.retryPauseNs);
      else deadline.check();
    }
  }

  private async releaseGlobal(addr: RemoteAddr, lock: LockId): Promise<void> {
    await this.ports.verbs.write(addr, new Uint8Array(8), { lock });
  }
}

function abortedPromise(signal: StopSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export const sherman: ProtocolDefinition = {
  id: 'sherman',
  // No lease and no repair (README, "Failures").
  recovery: { compute: { mechanism: 'none', action: 'a dead node keeps the CAS words its clients held; held until a reset between runs' } },
  // No lease and no repair: a crashed holder keeps the global word (and its node's local entry).
  // A lost completion is repaired by a live client's read-back (tests/lost-completions).
  swarm: { pauses: 'beyond-lease', memoryRestart: true, partitions: true, flushedVerbs: true },
  summary: "Sherman's hierarchical CAS lock: a local lock table per compute node in front of one CAS word (hierarchy=false: Sherman-NH); mutex",
  fabric: 'verbs',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: SHERMAN_OPTION_HELP,
  createClient: (ports, options) => new ShermanClient(ports, readShermanOptions(options)),
};
