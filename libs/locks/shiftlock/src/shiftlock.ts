import { AcquireDeadline, AcquireSpan, LOCK_ATTR, recordHandoverGrant } from '@lockfabric/locks-common';
import { LeaseExpiredError, LockAbortedError, NS_PER_MS, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientAddress, ClientPorts, Grant, LockClient, LockId, LockMode, Message, RemoteAddr, Span, SpanContextRef } from '@lockfabric/ports';
import { EndpointPool } from './endpoints.js';
import {
  EMPTY_QUEUE_RELEASE_SWAP_MASK,
  EPOCH_MASK,
  FIELD_BOUNDARIES,
  READERS_MASK,
  READERS_MAX,
  READER_ACQUIRE_ADD,
  READER_RELEASE_ADD,
  RELCNT_MASK,
  RELCNT_SHIFT,
  TAIL_MASK,
  TRANSFER_ADD,
  addU64,
  decodeEntry,
  emptyQueueReleaseSwap,
  encodeEntry,
  enqueueSwap,
  entryFromBytes,
  leap,
  u64FromBytes,
} from './lock-entry.js';
import type { Epoch, LockEntry } from './lock-entry.js';
import { MessageType, decodeMessage, encodeMessage, epochOf } from './messages.js';
import type { OutgoingMessage, ShiftLockMessage } from './messages.js';
import type { ShiftLockOptions } from './options.js';
import { Patience } from './patience.js';
import { Recoverer } from './recovery.js';
import { RelCntWatch } from './relcnt-watch.js';
import type { WatchTiming } from './relcnt-watch.js';
import { decodeTail, encodeTail, tailAddress } from './tail-pointer.js';

interface GrantBase extends Grant {
  readonly addr: RemoteAddr;
  /** When the lease started on this client's clock (a handover receiver: when the Handover arrived). */
  readonly acquiredNs: number;
  /** acquiredNs + (1−δ)·T_lease: the holder must have released by then (spec §4.1). */
  readonly leaseEndNs: number;
  /** The acquire span, linked from the `lock.handover` span of this hold's release. */
  readonly acquireSpan?: SpanContextRef;
}

export interface ShiftLockReaderGrant extends GrantBase {
  readonly role: 'reader';
  /** RelCnt when the reader was admitted; a leap from it means the lock was reset meanwhile. */
  readonly relCntView: bigint;
}

/** A writer's guard (spec §2.5). */
export interface WriterGuard {
  readonly slot: number;
  /** This acquisition's TailPtr. */
  readonly me: bigint;
  /** RelCnt at enqueue: messages showing a leap from it are from before a reset. */
  readonly enqueueRelCnt: bigint;
  /** The exact RelCnt while held (invariant I6). */
  curRelCnt: bigint;
  /** Consecutive writer holders before this one in the current writer phase. */
  consWrt: number;
  /** The current Epoch, known exactly while held (I5). */
  epoch: Epoch;
  acquiredNs: number;
}

export interface ShiftLockWriterGrant extends GrantBase {
  readonly role: 'writer';
  readonly guard: WriterGuard;
}

export type ShiftLockGrant = ShiftLockReaderGrant | ShiftLockWriterGrant;

export interface ShiftLockClientStats {
  successorsSent: number;
  handoversSent: number;
  modeChangesSent: number;
  /** Releases that timed out waiting for the successor's Successor message and dropped the lock (A13). */
  droppedLocks: number;
  /** Messages discarded: meant for an earlier incarnation of an endpoint, or from before a reset (A24). */
  staleMessages: number;
  /** Acquisitions restarted because the lock was reset. */
  restarts: number;
  /** Acquires whose caller gave up (deadline or abort) and that finished unattended. */
  abandoned: number;
}

const LINK_ROLE = 'lockfabric.link.role';
const flip = (epoch: Epoch): Epoch => (epoch === 0 ? 1 : 0);

/**
 * ShiftLock (FAST '25) over the ports: the 16-byte entry driven by masked atomics, a queue of writers
 * handing over by SEND, readers counted in RdrCnt and admitted in batches by Epoch flips, and
 * RelCnt-watching failure detection with era-fenced recovery.
 *
 * Uncontended: a reader takes 1 ExtFAA to acquire and 1 to release; a writer 1 ExtCAS and 1 ExtCAS.
 */
export class ShiftLockClient implements LockClient<ShiftLockGrant> {
  readonly stats: ShiftLockClientStats = {
    successorsSent: 0,
    handoversSent: 0,
    modeChangesSent: 0,
    droppedLocks: 0,
    staleMessages: 0,
    restarts: 0,
    abandoned: 0,
  };
  readonly recoverer: Recoverer;
  private readonly endpoints: EndpointPool;
  private readonly leaseNs: number;
  private readonly watchTiming: WatchTiming;

  constructor(
    private readonly ports: ClientPorts,
    readonly options: ShiftLockOptions,
  ) {
    this.endpoints = new EndpointPool(options.endpoints);
    this.recoverer = new Recoverer(ports, options);
    this.leaseNs = options.leaseNs;
    this.watchTiming = { stallNs: 3 * this.leaseNs * (1 + options.clockDrift), gapNs: this.leaseNs };
    // Fail early on addresses a TailPtr cannot carry.
    encodeTail({ node: ports.self.node, client: ports.self.client, slot: 0, generation: 1 });
  }

  acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<ShiftLockGrant> {
    const op: OpCounters = Object.assign(new AcquireSpan(this.ports.trace, this.ports.clock, 'shiftlock', lock, mode, clientKey(this.ports.self)), { messages: 0 });
    let addr: RemoteAddr;
    let deadline: AcquireDeadline;
    try {
      addr = lockAddress(this.ports.locks, lock);
      deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
      deadline.check();
    } catch (error) {
      op.failed(error);
      return Promise.reject(error);
    }
    return new Promise<ShiftLockGrant>((resolve, reject) => {
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        op.span.setAttribute('lockfabric.messages', op.messages);
        op.failed(error);
        reject(error);
      };
      const patience = new Patience(this.ports.clock, deadline, options?.signal, (error) => {
        this.stats.abandoned++;
        fail(error);
      });
      const attempt = mode === 'shared' ? this.acquireShared(lock, addr, op, patience) : this.acquireExclusive(lock, addr, op, patience);
      attempt.then(
        (grant) => {
          if (grant === undefined) {
            fail(patience.error ?? new LockAbortedError(lock, 'the lock was reset'));
          } else if (!settled) {
            settled = true;
            op.span.setAttribute('lockfabric.messages', op.messages);
            op.granted();
            resolve(grant);
          } else {
            // The caller gave up while this attempt waited: pass the lock straight on.
            void this.release(grant).catch(() => undefined);
          }
        },
        (error: unknown) => fail(error),
      );
    });
  }

  async release(grant: ShiftLockGrant): Promise<void> {
    if (grant.role === 'reader') await this.releaseShared(grant);
    else await this.releaseExclusive(grant);
  }

  // ---- readers (spec §3.2) -------------------------------------------------------------------

  private async acquireShared(lock: LockId, addr: RemoteAddr, op: OpCounters, patience: Patience): Promise<ShiftLockGrant | undefined> {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) {
        // The reset wiped this reader's +1: nothing is held, so an abandoned attempt simply ends.
        this.stats.restarts++;
        op.retries++;
        if (patience.abandoned) return undefined;
      }
      this.ports.phases?.enter(attempt === 0 ? 'initial-atomic' : 'retries');
      op.verbs++;
      const issuedNs = this.ports.clock.nowNs();
      const old = decodeEntry(await this.ports.verbs.maskedFaa(addr, 16, READER_ACQUIRE_ADD, FIELD_BOUNDARIES, { lock }));
      if (old.readers >= READERS_MAX) throw new RangeError(`shiftlock lock ${lock}: RdrCnt overflowed ${READERS_MAX} (spec A14)`);
      const admitted = old.tail === 0n ? { relCnt: old.relCnt, sinceNs: issuedNs } : await this.waitForFlip(lock, addr, old, issuedNs, op, patience);
      if (admitted !== undefined && (await this.stillCurrent(lock, addr, admitted, op))) return this.readerGrant(lock, addr, admitted, op);
    }
  }

  /**
   * A grant dates from the evidence it rests on (the verb that showed it, or the Handover's arrival),
   * not from when this process got round to it. One whose lease is over by then (the process was
   * descheduled, or the message sat in a queue) may predate a reset: one READ of RelCnt tells, and a
   * leap sends the attempt back to the start instead of into a hold of a lock someone else now holds.
   */
  private stillCurrent(lock: LockId, addr: RemoteAddr, grant: Evidence, op: OpCounters): boolean | Promise<boolean> {
    // Not async: the usual answer needs no verb, and callers await it either way (same turns).
    if (this.options.mutantStaleGrants || this.ports.clock.nowNs() <= this.leaseEnd(grant.sinceNs)) return true;
    op.verbs++;
    return this.readRelCnt(lock, addr).then((relCnt) => !leap(grant.relCnt, relCnt));
  }

  /**
   * Polls the entry until Epoch differs from the FAA snapshot's; returns RelCnt then and the issue time
   * of the look before (the flip came after it), or undefined after a reset.
   */
  private async waitForFlip(lock: LockId, addr: RemoteAddr, old: LockEntry, faaIssuedNs: number, op: OpCounters, patience: Patience): Promise<Evidence | undefined> {
    const watch = new RelCntWatch(old.relCnt, this.ports.clock.nowNs(), this.watchTiming);
    this.ports.phases?.enter('wait-writers');
    let previousLookNs = faaIssuedNs;
    for (;;) {
      await patience.sleep(this.options.pollIntervalNs);
      op.verbs++;
      const issuedNs = this.ports.clock.nowNs();
      const seen = decodeEntry(entryFromBytes(await this.ports.verbs.read(addr, 16, { lock })));
      const flipped = seen.epoch !== old.epoch;
      const admitted = { relCnt: seen.relCnt, sinceNs: previousLookNs };
      previousLookNs = issuedNs;
      // A8: test for a leap first — a reset sets Epoch to 0, which looks like a flip to a reader waiting on 1.
      if (this.options.mutantEpochBeforeLeap && flipped) return admitted;
      if (leap(watch.last, seen.relCnt)) return undefined;
      if (flipped) return admitted;
      if (watch.observe(seen.relCnt, this.ports.clock.nowNs()) === 'stalled' && (await this.recoverer.onStall(lock, addr, watch, patience)) === 'reset') return undefined;
    }
  }

  private async releaseShared(grant: ShiftLockReaderGrant): Promise<void> {
    const { lock, addr } = grant;
    if (this.ports.clock.nowNs() > grant.leaseEndNs) return this.releaseSharedLate(grant);
    this.ports.phases?.enter('initial-atomic');
    const old = decodeEntry(await this.ports.verbs.maskedFaa(addr, 16, READER_RELEASE_ADD, FIELD_BOUNDARIES, { lock }));
    // The release landed on a lock reset since this reader was admitted (its process stalled between
    // the lease check and the FAA): the FAA cannot be fenced at one atomic, but the caller learns that
    // its hold was not exclusive of writers to the end. The next stall detection repairs the counts.
    if (leap(grant.relCntView, old.relCnt)) throw new LeaseExpiredError(lock, this.options.leaseNs / NS_PER_MS);
  }

  /**
   * A reader past its lease: waiters may be resetting the lock right now, so the release must not
   * land on a reset entry. It reads the entry and releases with a CAS that compares RdrCnt and
   * RelCnt (retrying as other readers come and go) instead of the blind FAA; a leap means the reset
   * came first and took this reader's +1 with it. Costs a READ and a CAS, on this rare path only.
   */
  private async releaseSharedLate(grant: ShiftLockReaderGrant): Promise<void> {
    const { lock, addr } = grant;
    let seen = decodeEntry(entryFromBytes(await this.ports.verbs.read(addr, 16, { lock })));
    for (;;) {
      if (leap(grant.relCntView, seen.relCnt) || seen.readers === 0) throw new LeaseExpiredError(lock, this.options.leaseNs / NS_PER_MS);
      const counts = READERS_MASK | RELCNT_MASK;
      const compare = encodeEntry(seen);
      const swap = encodeEntry({ ...seen, readers: seen.readers - 1, relCnt: addU64(seen.relCnt, 1n) });
      const old = decodeEntry(await this.ports.verbs.maskedCas(addr, 16, compare, swap, counts, counts, { lock }));
      if (old.readers === seen.readers && old.relCnt === seen.relCnt) return;
      seen = old;
    }
  }

  private readerGrant(lock: LockId, addr: RemoteAddr, admitted: Evidence, op: OpCounters): ShiftLockReaderGrant {
    const relCntView = admitted.relCnt;
    const acquiredNs = this.options.mutantStaleGrants ? this.ports.clock.nowNs() : admitted.sinceNs;
    const context = op.span.context;
    return {
      lock,
      mode: 'shared',
      role: 'reader',
      addr,
      acquiredNs,
      leaseEndNs: this.leaseEnd(acquiredNs),
      relCntView,
      ...(context ? { acquireSpan: context } : {}),
    };
  }

  // ---- writers (spec §3.3) -------------------------------------------------------------------

  private async acquireExclusive(lock: LockId, addr: RemoteAddr, op: OpCounters, patience: Patience): Promise<ShiftLockGrant | undefined> {
    const slot = this.endpoints.take();
    if (slot === undefined) throw new LockAbortedError(lock, `all ${this.endpoints.count} endpoints of this client are in use (option endpoints)`);
    let held = false;
    try {
      for (let attempt = 0; ; attempt++) {
        if (attempt > 0) {
          // Reset (or abandoned before enqueuing): the old TailPtr is gone from the entry.
          this.stats.restarts++;
          op.retries++;
          if (patience.abandoned) return undefined;
        }
        // A restart after a reset is a retry; its atomic is timed as one (the paper's RT).
        this.ports.phases?.enter(attempt === 0 ? 'initial-atomic' : 'retries');
        const me = encodeTail({ node: this.ports.self.node, client: this.ports.self.client, slot, generation: this.endpoints.advance(slot) });
        // Drop what is left for earlier incarnations of this slot; the first verb goes out first so that a
        // simulator started right after acquire() sees work scheduled.
        const guard = await this.enqueue(lock, addr, slot, me, op, patience, (nowNs) => this.drainStale(slot, me, nowNs));
        if (guard && !(await this.stillCurrent(lock, addr, { relCnt: guard.curRelCnt, sinceNs: guard.acquiredNs }, op))) {
          // The grant predates a reset: this TailPtr is gone from the entry with the old queue.
          continue;
        }
        if (guard) {
          held = true;
          if (this.options.mutantStaleGrants) guard.acquiredNs = this.ports.clock.nowNs();
          const context = op.span.context;
          return {
            lock,
            mode: 'exclusive',
            role: 'writer',
            addr,
            guard,
            acquiredNs: guard.acquiredNs,
            leaseEndNs: this.leaseEnd(guard.acquiredNs),
            ...(context ? { acquireSpan: context } : {}),
          };
        }
      }
    } finally {
      if (!held) this.endpoints.free(slot);
    }
  }

  /** One enqueue and the wait that follows; undefined when the attempt must restart. */
  private async enqueue(
    lock: LockId,
    addr: RemoteAddr,
    slot: number,
    me: bigint,
    op: OpCounters,
    patience: Patience,
    drain: (nowNs: number) => Promise<void>,
  ): Promise<WriterGuard | undefined> {
    const { verbs, clock } = this.ports;
    if (this.options.trivialCas) {
      const first = this.trivialAttempts(lock, addr, slot, me, op, patience);
      await drain(clock.nowNs());
      const taken = await first;
      if (taken !== 'failed') return taken;
    }
    op.verbs++;
    const issuedNs = clock.nowNs();
    const enqueued = verbs.maskedCas(addr, 16, 0n, enqueueSwap(me), 0n, TAIL_MASK, { lock });
    // The drain looks without waiting: the enqueue's issue time is a deadline already passed.
    if (!this.options.trivialCas) await drain(issuedNs);
    const old = decodeEntry(await enqueued);
    const guard: WriterGuard = { slot, me, enqueueRelCnt: old.relCnt, curRelCnt: old.relCnt, consWrt: 0, epoch: old.epoch, acquiredNs: issuedNs };
    if (old.tail !== 0n) {
      // Case A: a writer is ahead; wait locally for its Handover or ModeChanged.
      return (await this.waitForPredecessor(lock, addr, old, guard, op, patience)) ? guard : undefined;
    }
    if (old.readers !== 0 && !this.options.mutantSkipReaderWait) {
      this.ports.phases?.enter('wait-readers');
      // Case B: queue head behind readers; exactly the readers counted in the snapshot go first.
      const expected = addU64(old.relCnt, BigInt(old.readers));
      const watch = new RelCntWatch(old.relCnt, clock.nowNs(), this.watchTiming);
      const sinceNs = await this.waitForRelCnt(lock, addr, expected, watch, op, patience);
      if (sinceNs === undefined) return undefined;
      guard.curRelCnt = expected;
      guard.acquiredNs = sinceNs;
    }
    // Case C: free lock, taken with the single atomic.
    return guard;
  }

  /** A16: up to two ExtCAS that take the lock only if it is entirely free. */
  private async trivialAttempts(lock: LockId, addr: RemoteAddr, slot: number, me: bigint, op: OpCounters, patience: Patience): Promise<WriterGuard | 'failed' | undefined> {
    for (let i = 0; i < 2; i++) {
      if (i > 0) {
        this.ports.phases?.enter('retries');
        await patience.sleep(Math.max(this.options.pollIntervalNs, 1));
        if (patience.abandoned) return undefined;
      }
      op.verbs++;
      const issuedNs = this.ports.clock.nowNs();
      const old = decodeEntry(await this.ports.verbs.maskedCas(addr, 16, 0n, enqueueSwap(me), READERS_MASK | TAIL_MASK, TAIL_MASK, { lock }));
      if (old.tail === 0n && old.readers === 0) {
        return { slot, me, enqueueRelCnt: old.relCnt, curRelCnt: old.relCnt, consWrt: 0, epoch: old.epoch, acquiredNs: issuedNs };
      }
      op.retries++;
    }
    return 'failed';
  }

  /** Sends Successor, then waits on the local mailbox; reads RelCnt every T_lease/2 for failure detection. */
  private async waitForPredecessor(lock: LockId, addr: RemoteAddr, old: LockEntry, guard: WriterGuard, op: OpCounters, patience: Patience): Promise<boolean> {
    const { clock } = this.ports;
    const predecessor = tailAddress(old.tail);
    this.ports.phases?.enter('notify-predecessor');
    await this.sameNodeDelay(predecessor);
    this.send({ type: MessageType.successor, to: predecessor, lock, value: old.relCnt, target: old.tail, sender: guard.me });
    this.stats.successorsSent++;
    op.messages++;
    this.ports.phases?.enter('wait-predecessor');
    const watch = new RelCntWatch(old.relCnt, clock.nowNs(), this.watchTiming);
    const lookEveryNs = this.leaseNs / 2;
    let nextLookNs = clock.nowNs() + lookEveryNs;
    for (;;) {
      const message = await this.receiveFor(lock, guard.me, GRANT_TYPES, patience.wakeBy(nextLookNs), patience.waitSignal);
      if (message) {
        if (leap(watch.last, message.value)) {
          this.stats.staleMessages++;
          continue;
        }
        if (message.trace) {
          op.span.addLink(message.trace, { [LINK_ROLE]: 'previous-holder' });
          recordHandoverGrant(this.ports.trace, message.trace, { [LOCK_ATTR.protocol]: 'shiftlock', [LOCK_ATTR.lock]: lock, [LOCK_ATTR.client]: clientKey(this.ports.self) });
        }
        if (message.type === MessageType.handover) {
          guard.curRelCnt = message.value;
          guard.consWrt = message.count;
          // A1: the Epoch travels with the lock; the paper takes it from the (possibly stale) enqueue snapshot.
          guard.epoch = this.options.paperLiteralEpoch ? old.epoch : epochOf(message);
          // The lease runs from the Handover's arrival (ShiftLock §3.3: the RNIC receive timestamp).
          guard.acquiredNs = message.receivedNs ?? clock.nowNs();
          return true;
        }
        // ModeChanged: the readers admitted by the flip go first; the head then waits for RelCnt = x.
        guard.consWrt = 0;
        guard.epoch = this.options.paperLiteralEpoch ? flip(old.epoch) : epochOf(message);
        this.ports.phases?.enter('wait-readers');
        const sinceNs = await this.waitForRelCnt(lock, addr, message.value, watch, op, patience);
        if (sinceNs === undefined) return false;
        guard.curRelCnt = message.value;
        guard.acquiredNs = sinceNs;
        return true;
      }
      patience.check();
      if (clock.nowNs() >= nextLookNs) {
        op.verbs++;
        const verdict = watch.observe(await this.readRelCnt(lock, addr), clock.nowNs());
        if (verdict === 'leap') return false;
        if (verdict === 'stalled' && (await this.recoverer.onStall(lock, addr, watch, patience)) === 'reset') return false;
        nextLookNs = clock.nowNs() + lookEveryNs;
      }
    }
  }

  /** Polls RelCnt until it equals `expected`; returns when the READ that saw it was issued, undefined when the lock was reset meanwhile. */
  private async waitForRelCnt(lock: LockId, addr: RemoteAddr, expected: bigint, watch: RelCntWatch, op: OpCounters, patience: Patience): Promise<number | undefined> {
    for (;;) {
      await patience.sleep(this.options.pollIntervalNs);
      op.verbs++;
      const issuedNs = this.ports.clock.nowNs();
      const relCnt = await this.readRelCnt(lock, addr);
      if (relCnt === expected) return issuedNs;
      const verdict = watch.observe(relCnt, this.ports.clock.nowNs());
      if (verdict === 'leap') return undefined;
      if (verdict === 'stalled' && (await this.recoverer.onStall(lock, addr, watch, patience)) === 'reset') return undefined;
    }
  }

  // ---- writer release (spec §3.4) ------------------------------------------------------------

  private async releaseExclusive(grant: ShiftLockWriterGrant): Promise<void> {
    const { lock, addr, guard } = grant;
    const { verbs, clock } = this.ports;
    try {
      // One clock read serves the lease check and, as a deadline already passed, the look below.
      const nowNs = clock.nowNs();
      if (nowNs > grant.leaseEndNs && (await this.readRelCnt(lock, addr)) !== guard.curRelCnt) {
        // Held past the lease and the lock was reset (or changed) under this holder: touch nothing.
        throw new LeaseExpiredError(lock, this.options.leaseNs / NS_PER_MS);
      }
      // A successor already announced (checked without waiting) gets the lock without an atomic.
      this.ports.phases?.enter('notify-successor');
      let successor = await this.takeSuccessor(lock, guard, nowNs);
      if (successor === undefined) {
        this.ports.phases?.enter('initial-atomic');
        const old = decodeEntry(
          await verbs.maskedCas(addr, 16, enqueueSwap(guard.me), emptyQueueReleaseSwap(guard.curRelCnt, flip(guard.epoch)), TAIL_MASK, EMPTY_QUEUE_RELEASE_SWAP_MASK, { lock }),
        );
        if (old.tail === guard.me) return;
        // A leapt RelCnt means the lock was reset under this holder (it outran its lease): the queue it
        // headed is gone, and no Successor of it will come. Waiting for one would report a hold as kept.
        if (leap(guard.curRelCnt, old.relCnt)) throw new LeaseExpiredError(lock, this.options.leaseNs / NS_PER_MS);
        // Someone enqueued behind this holder: its Successor message is on the way.
        this.ports.phases?.enter('notify-successor');
        successor = await this.takeSuccessor(lock, guard, clock.nowNs() + this.leaseNs * (1 + this.options.clockDrift));
        if (successor === undefined) {
          // A13: drop the lock; the waiters' failure detection will recover it.
          this.stats.droppedLocks++;
          return;
        }
      }
      await this.passOn(grant, successor);
    } finally {
      this.endpoints.free(guard.slot);
    }
  }

  /** Hands the lock to the successor: writer-to-writer Handover, or transfer to readers plus ModeChanged. */
  private async passOn(grant: ShiftLockWriterGrant, successor: bigint): Promise<void> {
    const { lock, addr, guard } = grant;
    const { verbs } = this.ports;
    const to = tailAddress(successor);
    await this.sameNodeDelay(to);
    if (guard.consWrt + 1 >= this.options.consecutiveWriters) {
      const span = this.startHandover(grant, to, 'mode-change');
      let old: LockEntry;
      if (this.options.hardenedTransfer) {
        // A3 hardened: flip only if the lock is still exactly as this holder left it.
        const compare = (guard.curRelCnt << RELCNT_SHIFT) | BigInt(guard.epoch);
        const swap = (addU64(guard.curRelCnt, 1n) << RELCNT_SHIFT) | BigInt(flip(guard.epoch));
        old = decodeEntry(await verbs.maskedCas(addr, 16, compare, swap, EPOCH_MASK | RELCNT_MASK, EPOCH_MASK | RELCNT_MASK, { lock }));
        if (old.epoch !== guard.epoch || old.relCnt !== guard.curRelCnt) {
          span.setAttribute(LOCK_ATTR.outcome, 'lease-expired');
          span.end();
          throw new LeaseExpiredError(lock, this.options.leaseNs / NS_PER_MS);
        }
      } else {
        old = decodeEntry(await verbs.maskedFaa(addr, 16, TRANSFER_ADD, FIELD_BOUNDARIES, { lock }));
      }
      // The successor waits for this release plus every reader counted at the flip.
      const expected = addU64(old.relCnt, BigInt(old.readers) + 1n);
      this.send({ type: MessageType.modeChanged, to, lock, value: expected, epoch: BigInt(flip(old.epoch)), target: successor, sender: guard.me, ...traceOf(span) });
      this.stats.modeChangesSent++;
      span.end();
      return;
    }
    const span = this.startHandover(grant, to, 'handover');
    let curRelCnt = guard.curRelCnt;
    if (this.options.handoverBumpsRelCnt) {
      // A2: keep RelCnt moving at every handover, which the 3·T_lease detection bound relies on. The
      // paper's FAA becomes a CAS from cur_rel (I6: nothing else moves RelCnt while a writer holds),
      // at the same cost: a holder that outran its lease and finds the lock reset must neither bump
      // the new era's RelCnt nor hand a grant from the old era to a waiter that has not seen the reset.
      const seen = await verbs.cas({ ...addr, offset: addr.offset + 8 }, curRelCnt, addU64(curRelCnt, 1n), { lock });
      if (seen !== curRelCnt) {
        span.setAttribute(LOCK_ATTR.outcome, 'lease-expired');
        span.end();
        throw new LeaseExpiredError(lock, this.options.leaseNs / NS_PER_MS);
      }
      curRelCnt = addU64(curRelCnt, 1n);
    }
    this.send({ type: MessageType.handover, to, lock, value: curRelCnt, epoch: BigInt(guard.epoch), count: guard.consWrt + 1, target: successor, sender: guard.me, ...traceOf(span) });
    this.stats.handoversSent++;
    span.end();
  }

  private startHandover(grant: ShiftLockWriterGrant, to: ClientAddress, message: 'handover' | 'mode-change'): Span {
    const span = this.ports.trace.startSpan('lock.handover', {
      attributes: {
        [LOCK_ATTR.protocol]: 'shiftlock',
        [LOCK_ATTR.lock]: grant.lock,
        [LOCK_ATTR.client]: clientKey(this.ports.self),
        'lockfabric.handover.from': clientKey(this.ports.self),
        'lockfabric.handover.to': clientKey(to),
        'lockfabric.shiftlock.message': message,
      },
    });
    if (grant.acquireSpan) span.addLink(grant.acquireSpan, { [LINK_ROLE]: 'previous-holder' });
    return span;
  }

  // ---- messages ------------------------------------------------------------------------------

  /** The Successor message for this acquisition (kept in the mailbox since it arrived), waiting until `deadlineNs`. */
  private async takeSuccessor(lock: LockId, guard: WriterGuard, deadlineNs: number): Promise<bigint | undefined> {
    for (;;) {
      const message = await this.receiveFor(lock, guard.me, SUCCESSOR_TYPES, deadlineNs, undefined);
      if (!message) return undefined;
      if (!leap(guard.enqueueRelCnt, message.value)) return message.sender;
      this.stats.staleMessages++;
    }
  }

  private async receiveFor(
    lock: LockId,
    me: bigint,
    types: readonly MessageType[],
    deadlineNs: number,
    signal: AbortSignal | undefined,
  ): Promise<ShiftLockMessage | undefined> {
    const matches = (raw: Message): boolean => {
      const message = decodeMessage(raw);
      return message !== undefined && message.lock === lock && message.target === me && types.includes(message.type);
    };
    const raw = await this.ports.mailbox.receive(matches, { deadlineNs, ...(signal ? { signal } : {}) });
    return raw ? decodeMessage(raw) : undefined;
  }

  /**
   * Drops queued messages for earlier incarnations of endpoint `slot` (A24: drain the endpoint on
   * restart), without waiting: `nowNs` is a time already passed, used as the looks' deadline.
   */
  private async drainStale(slot: number, me: bigint, nowNs: number): Promise<void> {
    const { self } = this.ports;
    const stale = (raw: Message): boolean => {
      const message = decodeMessage(raw);
      if (!message || message.type === MessageType.recover || message.type === MessageType.recoverReply || message.target === me) return false;
      try {
        const target = decodeTail(message.target);
        return target.node === self.node && target.client === self.client && target.slot === slot;
      } catch {
        return true;
      }
    };
    const look = { deadlineNs: nowNs };
    while (await this.ports.mailbox.receive(stale, look)) this.stats.staleMessages++;
  }

  private send(message: OutgoingMessage): void {
    this.ports.mailbox.send(encodeMessage(message));
  }

  private async sameNodeDelay(peer: ClientAddress): Promise<void> {
    if (this.options.sameNodeDelayNs > 0 && peer.node === this.ports.self.node) await this.ports.clock.sleep(this.options.sameNodeDelayNs);
  }

  // ---- verbs ---------------------------------------------------------------------------------

  private async readRelCnt(lock: LockId, addr: RemoteAddr): Promise<bigint> {
    return u64FromBytes(await this.ports.verbs.read({ ...addr, offset: addr.offset + 8 }, 8, { lock }));
  }

  private leaseEnd(acquiredNs: number): number {
    return acquiredNs + this.leaseNs * (1 - this.options.clockDrift);
  }
}

const GRANT_TYPES: readonly MessageType[] = [MessageType.handover, MessageType.modeChanged];
const SUCCESSOR_TYPES: readonly MessageType[] = [MessageType.successor];

/** What a grant rests on: the RelCnt it saw and the earliest time it can date from. */
interface Evidence {
  readonly relCnt: bigint;
  readonly sinceNs: number;
}

/** AcquireSpan plus the SENDs an acquire issued. */
type OpCounters = AcquireSpan & { messages: number };

function traceOf(span: Span): { trace?: SpanContextRef } {
  return span.context ? { trace: span.context } : {};
}
