import { AcquireDeadline, AcquireSpan, LOCK_ATTR, isUncertain, waitWhileLocal } from '@lockfabric/locks-common';
import type { LocalWord } from '@lockfabric/locks-common';
import type { QueueMemberState, QueueRecoveryGroup, QueueRecoveryMember } from '@lockfabric/locks-common';
import { ConfigError, FabricAccessError, LockAbortedError, Stopper, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, RemoteAddr, SpanContextRef } from '@lockfabric/ports';
import { classAccess } from './class-access.js';
import type { ClassAccess, VerbTally } from './class-access.js';
import { DescriptorPool } from './descriptor-pool.js';
import { decodeTrace, encodeTrace } from './handover-trace.js';
import {
  LOCAL,
  NULL_REF,
  REMOTE,
  SLOT_BYTES_NEEDED,
  TRACE_TAG_OFFSET_BYTES,
  WAITING,
  addrAt,
  budgetOf,
  budgetWord,
  className,
  REF_GENERATIONS,
  decodeRef,
  descriptorAddrs,
  encodeRef,
  otherClass,
  refGeneration,
  tailAddr,
  traceAreaAddr,
  victimAddr,
  withRefGeneration,
} from './layout.js';
import type { AccessClass, DescriptorAddrs, DescriptorId } from './layout.js';
import { NaiveMixedCasLock } from './naive-lock.js';
import type { AlockEvent, AlockEventBody, AlockObserver, EntryKind } from './observer.js';
import type { AlockOptions } from './options.js';

export const ALOCK_ATTR = {
  accessClass: 'lockfabric.alock.class',
  entry: 'lockfabric.alock.entry',
  budget: 'lockfabric.alock.budget',
  from: 'lockfabric.handover.from',
  to: 'lockfabric.handover.to',
} as const;

export interface AlockGrant extends Grant {
  /** The lock's entry on its home node. */
  readonly entry: RemoteAddr;
  readonly accessClass: 'local' | 'remote';
  /** How the lock was obtained; `naive` only under the M0 mutant. */
  readonly entryKind: EntryKind | 'naive';
  /** Which of the client's queue descriptors holds the lock (-1 under the M0 mutant). */
  readonly descriptor: number;
}

/** One acquisition's state, from descriptor initialisation to release. */
interface Acquisition {
  readonly lock: LockId;
  readonly entry: RemoteAddr;
  readonly cls: AccessClass;
  readonly id: DescriptorId;
  readonly ref: bigint;
  readonly desc: DescriptorAddrs;
  readonly access: ClassAccess;
  readonly tally: VerbTally;
  readonly op: AcquireSpan;
  readonly deadline: AcquireDeadline;
  readonly tracing: boolean;
  /** Budget this holder owns; it hands `budget - 1` to its successor. */
  budget: number;
  /** The caller gave up (timeout/abort) after enqueueing; the lock is passed on as soon as it arrives. */
  abandoned: boolean;
  abandon: (error: unknown) => void;
  /**
   * For recovery: `busy` while a write of this acquisition may be in flight (swap, link, victim),
   * `waiting` while it only polls, `holding` from its entry until its release returns.
   */
  stage: 'busy' | 'waiting' | 'holding';
  /** Set when a recovery aborted this acquisition: it stops at its next step and never enters. */
  recoveryAbort?: string;
  /** Aborted with `recoveryAbort`: wakes a local wait so the abort is seen at once. */
  readonly wake: Stopper;
}

/**
 * ALock (asymmetric lock, spec §3): one budgeted MCS cohort per access class and a Peterson lock
 * between the two cohort heads, in which each cohort's tail doubles as its Peterson flag.
 *
 * A client on the lock's home node (`verbs.isLocal(entry)`) is LOCAL and uses CPU loads, stores and
 * CAS only — zero verbs. Every other client is REMOTE and uses verbs; its descriptor lives in its own
 * node's memory, where it spins with CPU loads while predecessors and successors WRITE into it.
 * The access discipline that makes this correct without local/remote atomicity (spec §2.1):
 * T_L is RMW'd only by CPUs and T_R only by the NIC; victim and descriptors are only read/written.
 *
 * Uncontended verbs of a REMOTE client: CAS(T_R) + WRITE(victim) + READ(T_L) to acquire, CAS(T_R)
 * to release. A LOCAL client: none.
 */
/** A release CAS whose outcome a read-back could not decide (see `readBackTail`). */
const UNCERTAIN = Symbol('uncertain');
/** Read-back pacing after a lost completion: 1 µs doubling to 0.5 ms, at most 200 verbs. */
const READ_BACK_FIRST_WAIT_NS = 1_000;
const READ_BACK_MAX_WAIT_NS = 500_000;
const READ_BACK_ATTEMPTS = 200;

export class AlockClient implements LockClient<AlockGrant>, QueueRecoveryMember {
  private readonly pool: DescriptorPool;
  /** Acquisitions from their swap until their release returns (or a recovery aborts them). */
  private readonly live = new Set<Acquisition>();
  /** Descriptors a failed verb left in an unknown queue state: free again only after a recovery reset. */
  private readonly broken = new Set<number>();
  /**
   * Descriptors freed by a recovery abort: their budget and `next` words may hold a hand-over or a
   * link that arrived for the aborted acquisition (even after the abort, from a survivor's holder on
   * another node). Unlike a release, the abort does not leave them ready, so their next use clears
   * them first.
   */
  private readonly dirty = new Set<number>();
  /** The acquisition holding the lock through each descriptor, if any. */
  private readonly held: (Acquisition | undefined)[] = [];
  private readonly naive: NaiveMixedCasLock;
  private readonly budgets: readonly [number, number];
  private readonly self: string;
  /** Link generation of each descriptor: bumped when a release gives up on an unlinked successor. */
  private readonly generations: number[] = [0, 0];

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: AlockOptions,
    /** The node's queue-recovery group, which the protocol's definition hands every client (alock.ts). */
    private readonly recovery: QueueRecoveryGroup,
    private readonly observer?: AlockObserver,
  ) {
    if (ports.descriptors.slotBytes < SLOT_BYTES_NEEDED) {
      throw new ConfigError([`alock needs descriptor slots of at least ${SLOT_BYTES_NEEDED} bytes; this fabric offers ${ports.descriptors.slotBytes}`]);
    }
    this.pool = new DescriptorPool(options.spinNs);
    this.naive = new NaiveMixedCasLock(ports, options.spinNs);
    this.budgets = [options.localBudget, options.remoteBudget];
    this.self = clientKey(ports.self);
    recovery.register(this);
  }

  recoveryState(): QueueMemberState {
    const count = (stage: Acquisition['stage']) => [...this.live].filter((a) => a.stage === stage).length;
    return { holding: count('holding'), waiting: count('waiting'), busy: count('busy'), broken: this.broken.size };
  }

  abortWaiters(reason: string): number {
    let aborted = 0;
    for (const a of [...this.live]) {
      if (a.stage !== 'waiting') continue;
      aborted++;
      a.recoveryAbort = reason;
      a.wake.stop(reason);
      this.live.delete(a);
      this.dirty.add(a.id.index);
      this.pool.free(a.id.index);
      a.abandon(new LockAbortedError(a.lock, reason));
    }
    for (const index of this.broken) {
      this.dirty.add(index);
      this.pool.free(index);
    }
    this.broken.clear();
    return aborted;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<AlockGrant> {
    const { ports } = this;
    const entry = lockAddress(ports.locks, lock);
    const cls: AccessClass = ports.verbs.isLocal(entry) ? LOCAL : REMOTE;
    const deadline = new AcquireDeadline(ports.clock, lock, mode, options);
    const op = new AcquireSpan(ports.trace, ports.clock, 'alock', lock, mode, this.self);
    op.span.setAttribute(ALOCK_ATTR.accessClass, className(cls));
    try {
      deadline.check();
      let entryKind: AlockGrant['entryKind'];
      let acquisition: Acquisition | undefined;
      if (this.options.mutantNaiveLocalCas) {
        await this.naive.acquire(entry, lock, cls, deadline, op);
        entryKind = 'naive';
      } else {
        const [enqueued, pred] = await this.enqueue(lock, entry, cls, deadline, op);
        acquisition = enqueued;
        entryKind = await this.awaitTurn(enqueued, pred);
      }
      op.span.setAttribute(ALOCK_ATTR.entry, entryKind);
      op.granted();
      const descriptor = acquisition ? acquisition.id.index : -1;
      if (acquisition) this.held[descriptor] = acquisition;
      return { lock, mode, entry, accessClass: className(cls), entryKind, descriptor };
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  async release(grant: AlockGrant): Promise<void> {
    if (grant.entryKind === 'naive') {
      await this.naive.release(grant.entry, grant.lock, grant.accessClass === 'local' ? LOCAL : REMOTE);
      return;
    }
    const a = this.held[grant.descriptor];
    if (!a || a.lock !== grant.lock) throw new RangeError(`alock: release of lock ${grant.lock} that client ${this.self} does not hold`);
    this.held[grant.descriptor] = undefined;
    await this.unlockAndFree(a);
  }

  /** Release and free the descriptor; one a failed verb left in an unknown state waits for a recovery reset. */
  private async unlockAndFree(a: Acquisition): Promise<void> {
    try {
      await this.unlock(a);
      this.pool.free(a.id.index);
    } catch (error) {
      this.broken.add(a.id.index);
      throw error;
    } finally {
      this.live.delete(a);
    }
  }

  /**
   * Swaps a ready descriptor into the cohort tail; gives up cleanly until the swap succeeds. The
   * descriptor already reads (waiting, null) — every release leaves it so — so the swap is the first
   * step, issued before the acquire first yields.
   */
  private async enqueue(
    lock: LockId,
    entry: RemoteAddr,
    cls: AccessClass,
    deadline: AcquireDeadline,
    op: AcquireSpan,
  ): Promise<[Acquisition, bigint]> {
    const { ports } = this;
    // While a recovery runs nobody joins a queue; the claim right after the gate check is synchronous.
    let index = this.recovery.gated ? undefined : this.pool.tryClaim();
    while (index === undefined) {
      op.retries++;
      // A closed gate, or every descriptor busy (e.g. parked behind a dead holder): sleep until the
      // gate opens or a descriptor is freed, at the poll that would have seen it, instead of polling.
      const recovery = this.recovery;
      if (this.options.mutantPollGate) await deadline.pause(this.options.spinNs);
      else if (recovery.gated) await deadline.pauseUntilWoken((wake) => recovery.onOpen(wake), this.options.spinNs);
      else await deadline.pauseUntilWoken((wake) => this.pool.onFree(wake), this.options.spinNs);
      index = this.recovery.gated ? undefined : this.pool.tryClaim();
    }
    const id: DescriptorId = { node: ports.self.node, client: ports.self.client, index };
    const tally: VerbTally = { verbs: 0 };
    const a: Acquisition = {
      lock,
      entry,
      cls,
      id,
      ref: withRefGeneration(encodeRef(id), this.generations[index] ?? 0),
      desc: descriptorAddrs(ports.descriptors, id),
      access: classAccess(cls, ports.verbs, lock, tally, this.options.sameNodeStores),
      tally,
      op,
      deadline,
      tracing: op.span.context !== undefined,
      budget: 0,
      abandoned: false,
      abandon: () => undefined,
      stage: 'busy',
      wake: new Stopper(),
    };
    this.live.add(a);
    try {
      if (this.dirty.delete(index) && !this.options.mutantSkipAbortClear) await Promise.all([ports.verbs.cpu.store(a.desc.budget, WAITING), ports.verbs.cpu.store(a.desc.next, NULL_REF)]);
      if (this.options.mutantVictimFirst) await this.writeVictim(a);
      return [a, await this.swap(a)];
    } catch (error) {
      // A failed CAS may still have run (a flushed queue pair fails it `unreachable` either way),
      // leaving this descriptor the tail, where a successor links into it. Bump its generation so
      // that link is stale when the descriptor is reused: a release would hand it the wrong lock.
      if (!this.options.mutantReuseAfterFailedSwap) this.generations[index] = ((this.generations[index] ?? 0) + 1) % REF_GENERATIONS;
      this.live.delete(a);
      this.pool.free(index);
      op.verbs += tally.verbs;
      throw error;
    }
  }

  /**
   * Waits for the lock once enqueued. A deadline or abort from here on rejects the caller's acquire
   * but not the acquisition: it keeps its queue position, and when the lock reaches it, passes it on.
   */
  private awaitTurn(a: Acquisition, pred: bigint): Promise<EntryKind> {
    return new Promise<EntryKind>((resolve, reject) => {
      a.abandon = (error) => {
        if (a.abandoned) return;
        a.abandoned = true;
        a.op.verbs += a.tally.verbs;
        this.emit(a, { type: 'abandon' });
        reject(error);
      };
      this.takeTurn(a, pred).then(
        (kind) => {
          if (!a.abandoned) {
            a.op.verbs += a.tally.verbs;
            resolve(kind);
            return;
          }
          // a fabric failure while passing on leaves the descriptor broken until a recovery reset
          void this.unlockAndFree(a).catch(() => undefined);
        },
        (error: unknown) => {
          // a failed verb (not a recovery abort) leaves the descriptor in an unknown queue state
          if (a.recoveryAbort === undefined && this.live.delete(a)) this.broken.add(a.id.index);
          a.abandon(error);
        },
      );
    });
  }

  /** Swap-by-CAS on the own cohort's tail (spec §3.4 lines 2–8): the first guess is an empty queue. */
  private async swap(a: Acquisition): Promise<bigint> {
    const tail = tailAddr(a.entry, a.cls);
    let guess = NULL_REF;
    for (;;) {
      a.deadline.check();
      const old = await a.access.cas(tail, guess, a.ref);
      if (old === guess) {
        this.emit(a, { type: 'swap', pred: guess });
        return guess;
      }
      a.op.retries++;
      guess = old;
    }
  }

  /** The flattened acquire of spec §3.6 after the swap. */
  private async takeTurn(a: Acquisition, pred: bigint): Promise<EntryKind> {
    const cpu = this.ports.verbs.cpu;
    const fresh = this.budgets[a.cls];
    let kind: EntryKind;
    if (pred === NULL_REF) {
      a.budget = fresh;
      if (!this.options.mutantSkipPeterson) await this.petersonEnter(a, !this.options.mutantVictimFirst);
      this.checkNotAborted(a);
      kind = 'leader';
    } else {
      const predDesc = descriptorAddrs(this.ports.descriptors, decodeRef(pred));
      this.emit(a, { type: 'link', pred });
      // The link carries the predecessor's generation (from the tail), so a link that arrives after
      // the predecessor gave up on it is recognisably stale.
      await a.access.storePeer(predDesc.next, withRefGeneration(a.ref, refGeneration(pred)));
      a.stage = 'waiting';
      let word: bigint;
      while ((word = await cpu.load(a.desc.budget)) === WAITING) await this.awaitChange(a, [{ addr: a.desc.budget, value: WAITING }], this.options.spinNs);
      this.checkNotAborted(a);
      a.stage = 'busy';
      if (a.tracing && !a.abandoned) await this.linkHandover(a);
      // Ready the budget word for the descriptor's next use; only the predecessor wrote it, once.
      await cpu.store(a.desc.budget, WAITING);
      const handed = budgetOf(word);
      if (handed === 0) {
        // The cohort used up its tenure: let a waiting head of the other class in first.
        if (!this.options.mutantSkipReacquire) await this.petersonEnter(a, true);
        this.checkNotAborted(a);
        a.budget = fresh;
        kind = 'reacquired';
      } else {
        a.budget = handed;
        kind = 'passed';
      }
    }
    a.stage = 'holding';
    this.emit(a, { type: 'enter', kind, budget: a.budget, pred });
    return kind;
  }

  /** A recovery aborted `a` while it waited: it must not enter (nor touch the queue again). */
  private checkNotAborted(a: Acquisition): void {
    if (a.recoveryAbort !== undefined) throw new LockAbortedError(a.lock, a.recoveryAbort);
  }

  /** Peterson entry (spec §3.3): yield with victim := own class, wait while the other cohort is queued and we are still the victim. */
  private async petersonEnter(a: Acquisition, writeVictim: boolean): Promise<void> {
    a.stage = 'busy';
    if (writeVictim) await this.writeVictim(a);
    a.stage = 'waiting';
    const other = otherClass(a.cls);
    const pollNs = a.cls === LOCAL ? this.options.spinNs : this.options.remoteSpinNs;
    for (;;) {
      if (this.options.petersonRead === 'combined' && a.cls !== LOCAL) {
        const words = await a.access.loadWords(a.entry, 3);
        if (words[other] === NULL_REF || words[2] !== BigInt(a.cls)) return;
      } else {
        const tail = await a.access.load(tailAddr(a.entry, other));
        if (tail === NULL_REF) return;
        if ((await a.access.load(victimAddr(a.entry))) !== BigInt(a.cls)) return;
        if (a.cls === LOCAL) {
          // Both words are in this node's memory: spin on them without polling.
          await this.awaitChange(a, [
            { addr: tailAddr(a.entry, other), value: tail },
            { addr: victimAddr(a.entry), value: BigInt(a.cls) },
          ], pollNs);
          continue;
        }
      }
      await this.pause(a, pollNs);
    }
  }

  private async writeVictim(a: Acquisition): Promise<void> {
    await a.access.store(victimAddr(a.entry), BigInt(a.cls));
    this.emit(a, { type: 'victim' });
  }

  /** qUnlock (spec §3.4 lines 16–20): hand over with one less budget, or clear the tail if nobody follows. */
  private async unlock(a: Acquisition): Promise<void> {
    this.emit(a, { type: 'exit' });
    await this.passOn(a);
    // Ready `next` for the descriptor's next use: a successor wrote it once, before being handed the lock.
    await this.ports.verbs.cpu.store(a.desc.next, NULL_REF);
  }

  /**
   * Failures: when the CAS finds a successor in the tail that never links in (it died between its
   * swap and its link), the wait for the link ends after `releaseLinkTimeoutNs` and the releaser
   * clears the cohort tail, whatever it now names (see `cutQueue`). Everyone cut off sits behind the
   * unlinked successor, which never gets the lock itself: this descriptor's generation is bumped
   * and a late link, carrying the old one, is ignored. So the cut-off waiters are never handed the
   * lock (exclusion holds even if the successor was only slow), their acquires end with
   * LockTimeoutError, and with the tail clear the cohort — and the Peterson flag it doubles as —
   * is free for new acquirers.
   */
  private async passOn(a: Acquisition): Promise<void> {
    let next = await this.loadLink(a);
    if (next === NULL_REF) {
      const tail = tailAddr(a.entry, a.cls);
      if (this.options.mutantPlainLocalRelease && a.cls === LOCAL) {
        await a.access.store(tail, NULL_REF);
        this.emit(a, { type: 'emptied' });
        return;
      }
      let seen: bigint | typeof UNCERTAIN;
      try {
        seen = await a.access.cas(tail, a.ref, NULL_REF);
      } catch (error) {
        if (!isUncertain(error) || this.options.mutantNoReadBack) throw error;
        seen = await this.readBackTail(a, tail);
      }
      if (seen === a.ref) {
        this.emit(a, { type: 'emptied' });
        return;
      }
      // A successor swapped in but has not linked yet: wait for its WRITE into our `next`.
      next = await this.waitForLink(a);
      if (next === NULL_REF && seen === UNCERTAIN) {
        // Our CAS may have emptied the cohort: never cut, the tail may be a later holder's. A link
        // that still comes is stale once the generation moves on.
        this.generations[a.id.index] = ((this.generations[a.id.index] ?? 0) + 1) % REF_GENERATIONS;
        return;
      }
      if (next === NULL_REF) {
        await this.cutQueue(a, seen as bigint);
        return;
      }
    }
    const to = decodeRef(next);
    const handed = a.budget - 1;
    this.emit(a, { type: 'handoff', to: next, budget: handed });
    const span = this.ports.trace.startSpan('lock.handover', {
      ...(a.op.span.context ? { parent: a.op.span.context } : {}),
      attributes: {
        [LOCK_ATTR.protocol]: 'alock',
        [LOCK_ATTR.lock]: a.lock,
        [ALOCK_ATTR.from]: this.self,
        [ALOCK_ATTR.to]: `${to.node}/${to.client}`,
        [ALOCK_ATTR.budget]: handed,
      },
    });
    try {
      const budgetAt = descriptorAddrs(this.ports.descriptors, to).budget;
      const words = span.context ? encodeTrace(span.context, to.index) : undefined;
      if (words) await a.access.storePeerWithTrace(traceAreaAddr(this.ports.descriptors, to), words, budgetAt, budgetWord(handed));
      else await a.access.storePeer(budgetAt, budgetWord(handed));
    } catch (error) {
      span.recordError(error);
      // The successor's node was declared dead: the hand-over is lost with it and the cohort stays
      // blocked until the coordinator's recovery resets the queues; this release is over all the same.
      if (!(error instanceof FabricAccessError && this.recovery.isDead(to.node))) throw error;
    } finally {
      span.end();
    }
  }

  /**
   * After the release's CAS of the cohort tail (me → null) failed `unreachable`, which it may have
   * run: once the link is back, load the tail. Still me means the CAS did not run (a releasing
   * descriptor is never swapped in again): send it again and return what it found. Anything else
   * is UNCERTAIN: the CAS ran, or a successor swapped in behind me; the caller cannot tell which.
   */
  private async readBackTail(a: Acquisition, tail: RemoteAddr): Promise<bigint | typeof UNCERTAIN> {
    let waitNs = READ_BACK_FIRST_WAIT_NS;
    for (let attempt = 1; ; attempt++) {
      await this.ports.clock.sleep(waitNs);
      waitNs = Math.min(waitNs * 2, READ_BACK_MAX_WAIT_NS);
      try {
        if ((await a.access.load(tail)) !== a.ref) return UNCERTAIN;
        return await a.access.cas(tail, a.ref, NULL_REF);
      } catch (error) {
        if (!isUncertain(error) || attempt >= READ_BACK_ATTEMPTS) throw error;
      }
    }
  }

  /** The successor link in `a`'s descriptor; NULL_REF when unset or stale (another generation's). */
  private async loadLink(a: Acquisition): Promise<bigint> {
    return this.linkOf(a, await this.ports.verbs.cpu.load(a.desc.next));
  }

  private linkOf(a: Acquisition, next: bigint): bigint {
    return next !== NULL_REF && refGeneration(next) === refGeneration(a.ref) ? next : NULL_REF;
  }

  /** Waits for the successor's link for at most `releaseLinkTimeoutNs`; NULL_REF if it never came. */
  private async waitForLink(a: Acquisition): Promise<bigint> {
    const { clock, verbs } = this.ports;
    const giveUpAtNs = this.options.mutantUnboundedReleaseWait ? Infinity : clock.nowNs() + this.options.releaseLinkTimeoutNs;
    let word: bigint;
    let next: bigint;
    while ((next = this.linkOf(a, (word = await verbs.cpu.load(a.desc.next)))) === NULL_REF) {
      if (giveUpAtNs - clock.nowNs() <= 0) return NULL_REF;
      // Woken by the successor's link (a stale one is ignored by linkOf and waited past).
      await waitWhileLocal(clock, verbs.cpu, [{ addr: a.desc.next, value: word }], { untilNs: giveUpAtNs, pollNs: this.options.spinNs });
    }
    return next;
  }

  /** The successor never linked: CAS the cohort tail from whatever it names to null (retrying as it moves). */
  private async cutQueue(a: Acquisition, observedTail: bigint): Promise<void> {
    // Bump first: from here on a link into this descriptor's current generation is stale.
    this.generations[a.id.index] = ((this.generations[a.id.index] ?? 0) + 1) % REF_GENERATIONS;
    const tailAt = tailAddr(a.entry, a.cls);
    let tail = observedTail;
    for (;;) {
      const seen = await a.access.cas(tailAt, tail, NULL_REF);
      if (seen === tail || seen === NULL_REF) break;
      tail = seen;
    }
    this.emit(a, { type: 'cut', tail });
  }

  /** Links the acquire span to the releaser's `lock.handover` span, if the releaser left its context. */
  private async linkHandover(a: Acquisition): Promise<void> {
    const area = traceAreaAddr(this.ports.descriptors, a.id);
    const words: bigint[] = [];
    for (let i = 0; i < 4; i++) words.push(await this.ports.verbs.cpu.load(addrAt(area, 8 * i)));
    const context: SpanContextRef | undefined = decodeTrace(words, a.id.index);
    if (!context) return;
    a.op.span.addLink(context, { [LOCK_ATTR.protocol]: 'alock' });
    await this.ports.verbs.cpu.store(addrAt(area, TRACE_TAG_OFFSET_BYTES), 0n);
  }

  /**
   * A spin on words of this node's own memory in place of `pause` periods: returns at the poll that
   * sees one of them changed or a recovery abort, or — while the caller still waits — at its
   * deadline or abort, which abandon the acquisition as `pause` does. Abandoned, it waits on.
   */
  private async awaitChange(a: Acquisition, words: readonly LocalWord[], pollNs: number): Promise<void> {
    const { clock, verbs } = this.ports;
    if (a.abandoned) await waitWhileLocal(clock, verbs.cpu, words, { pollNs, signals: [a.wake] });
    else await waitWhileLocal(clock, verbs.cpu, words, { untilNs: a.deadline.atNs, pollNs, signals: [a.wake, a.deadline.signal] });
    this.afterWait(a);
  }

  /** One poll period; a deadline or abort noticed here abandons the acquisition (see awaitTurn). */
  private async pause(a: Acquisition, ns: number): Promise<void> {
    await this.ports.clock.sleep(ns);
    this.afterWait(a);
  }

  /** After any wait: a recovery abort throws; a deadline or abort noticed now abandons the acquisition. */
  private afterWait(a: Acquisition): void {
    this.checkNotAborted(a);
    if (a.abandoned) return;
    try {
      a.deadline.check();
    } catch (error) {
      a.abandon(error);
    }
  }

  private emit(a: Acquisition, event: AlockEventBody): void {
    this.observer?.({ lock: a.lock, cls: className(a.cls), ref: a.ref, ...event } as AlockEvent);
  }
}
