import { LOCK_ATTR } from '@lockfabric/locks-common';
import { TableLostError, clientKey } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts, Clock, LockId, LockMode, RemoteAddr, SpanContextRef } from '@lockfabric/ports';
import type { ClientInbox, CnSignals, Membership } from './cn-signals.js';
import { encodeEntry } from './entry.js';
import type { QueueEntry } from './entry.js';
import { FabricVerbs } from './fabric-verbs.js';
import { VER_INIT, add64, sub64 } from './header.js';
import type { HeaderFields, HeaderLayout } from './header.js';
import { LockResetter } from './lock-reset.js';
import type { ResetOutcome, ResetReason, ResetRequest } from './lock-reset.js';
import { grantMessage, tableTag } from './messages.js';
import type { CqlOptions } from './options.js';
import { QueueSnapshot } from './queue-snapshot.js';
import { HEADER_BYTES } from './table-layout.js';
import type { CqlTable } from './table-layout.js';

/** Queue membership of a holder: what its release needs. */
export interface CqlHold {
  readonly lock: LockId;
  readonly mode: LockMode;
  /** Reset epoch the acquire FAA landed in; grants this holder sends carry it. */
  readonly epoch: number;
  readonly pos: number;
  /** This node's count of the membership (ended by the release FAA); absent in hand-made holds. */
  readonly membership?: Membership;
}

export type CqlAbortReason = 'reset-in-progress' | 'reset-seen' | 'reset' | ResetReason;

export type CqlAttempt =
  | {
      readonly ok: true;
      readonly hold: CqlHold;
      /** Earliest remote waiter behind this holder, from the grant (hierarchical hint). */
      readonly remoteTs: number | undefined;
      /** The releaser's `lock.handover` span, when the lock came by message. */
      readonly handover: SpanContextRef | undefined;
      readonly waited: boolean;
    }
  | { readonly ok: false; readonly reason: CqlAbortReason; readonly backoff: boolean };

/** Verbs issued by one operation (an AcquireSpan satisfies it). */
export interface VerbTally {
  verbs: number;
}

/** Counters of one client's CQL work, for tests and reports. */
export interface CqlStats {
  extraReads: number;
  grantsSent: number;
  resetsStarted: number;
  aborts: number;
  /** Header READs of acquires held at the node's gate while a reset was under way. */
  gateReads: number;
}

/**
 * The CQL lock of one client (paper §4, Fig. 7): FAA to enqueue, one WRITE of the entry when it
 * must wait, a grant message from the predecessor; release as FAA + READ of the queue in one
 * doorbell, then grant messages to the successor(s) found in the snapshot.
 */
export class CqlEngine {
  readonly stats: CqlStats = { extraReads: 0, grantsSent: 0, resetsStarted: 0, aborts: 0, gateReads: 0 };
  readonly resetter: LockResetter;
  /** How long a waiter waits for its grant before it resets the lock (acquireTimeoutNs + stagger). */
  readonly timeoutNs: number;
  private readonly refetchTimeoutNs: number;

  constructor(
    private readonly ports: ClientPorts,
    readonly header: HeaderLayout,
    readonly table: CqlTable,
    private readonly signals: CnSignals,
    private readonly inbox: ClientInbox,
    private readonly options: CqlOptions,
    private readonly protocol: string,
    /** Send earliest-remote-timestamp hints with grants (hierarchical mode). */
    private readonly withHints: boolean,
    /** Clients a RESET is broadcast to, besides the queued ones. */
    peers: () => readonly ClientAddress[] = () => [],
  ) {
    this.resetter = new LockResetter(ports, header, table, signals, options, protocol, peers);
    const stagger = (ports.self.node % 16) * options.acquireTimeoutStaggerNs;
    this.timeoutNs = options.acquireTimeoutNs + stagger;
    this.refetchTimeoutNs = options.refetchTimeoutNs === 0 ? this.timeoutNs : options.refetchTimeoutNs;
  }

  /**
   * Before an operation: if a memory node restarted since this node's state was built, reset
   * that state first (DecLock §4.6; CnSignals.followTables). The caller's pins were just followed.
   */
  followTables(): void {
    if (!this.options.mutantNoTableReset) this.signals.followTables(this.ports.tables?.incarnations?.());
  }

  /** True when the table this client's verbs are pinned to was lost (the memory node restarted). */
  tableLost(): boolean {
    return !this.options.mutantNoTableReset && (this.ports.tables?.lost() ?? false);
  }

  /** The table tag this client's messages about `lock` carry: its pinned incarnation of the lock's memory node. */
  private tagFor(lock: LockId): number {
    return this.options.mutantNoTableReset ? 0 : tableTag(this.resetter.incarnationOf(lock));
  }

  /** CQL_ACQUIRE: granted, or aborted (the caller retries; `backoff` when a reset is under way). */
  async acquire(lock: LockId, mode: LockMode, ts: number, tally: VerbTally): Promise<CqlAttempt> {
    const H = this.header;
    const verbs = new FabricVerbs(this.ports.verbs, lock);
    const addr = this.table.header(lock);
    const acq = H.acquireDelta(mode);
    const done = this.inbox.begin();
    try {
      return await this.acquireCql(lock, mode, ts, tally, verbs, addr, acq);
    } finally {
      done();
    }
  }

  private async acquireCql(lock: LockId, mode: LockMode, ts: number, tally: VerbTally, verbs: FabricVerbs, addr: RemoteAddr, acq: bigint): Promise<CqlAttempt> {
    const H = this.header;
    // No FAA while a reset announced to this node is under way (its RESET_ACK promised so); the
    // check and the count of the new membership happen in one step, before the FAA is posted.
    while (this.signals.gateClosed(lock)) await this.waitAtGate(lock, tally);
    // A member keeps its inbox pumping until it leaves: a RESET may come while it holds.
    const membership = this.signals.join(lock, this.inbox.begin());
    let holding = false;
    try {
      tally.verbs++;
      const old = await verbs.faa(addr, acq);
      // The FAA landed on a table that was lost before its completion came back (a cut delayed
      // it, say): no grant may come of it (§4.6; swarm seed 851).
      if (!this.options.mutantGrantFromLostFaa && this.tableLost()) throw new TableLostError(lock, 'the memory node restarted before this acquire’s FAA completed');
      const seen = H.decode(old);
      if (seen.resetId !== 0) return await this.withdraw(verbs, addr, acq, membership, tally, 'reset-in-progress');
      // The FAA landed before a reset's claim, but the RESET overtook its completion: leave (ack).
      if (this.signals.resetSeen(lock, seen.epoch)) return await this.withdraw(verbs, addr, acq, membership, tally, 'reset-seen');
      const pos = seen.qhead + seen.qsize;
      const hold: CqlHold = { lock, mode, epoch: seen.epoch, pos, membership };
      const member = { delta: acq, membership };

      // Proactive overflow check, before the grant test: never write into a live slot.
      if (!this.options.paperLiteralLazyOverflow && seen.qsize >= H.capacity) {
        return await this.abortWithReset(lock, add64(old, acq), member, seen.epoch, 'queue-overflow', tally);
      }
      if (this.grantedAtOnce(mode, seen)) {
        holding = true;
        return { ok: true, hold, remoteTs: undefined, handover: undefined, waited: false };
      }
      // A lap of 0xFFFF would look like a never-written entry.
      if (H.lap(pos) >= VER_INIT) return await this.abortWithReset(lock, add64(old, acq), member, seen.epoch, 'version-wrap', tally);

      const wait = this.signals.register(this.ports.self.client, lock, seen.epoch, pos, this.tagFor(lock));
      const entry: QueueEntry = { version: H.version(pos), ts, mode, client: this.ports.self };
      tally.verbs++;
      await verbs.writeWord(this.table.entry(lock, H.slot(pos)), encodeEntry(entry));
      const outcome = await wait.until(this.ports.clock, this.ports.clock.nowNs() + this.timeoutNs);
      // A grant that comes after the table was lost is for a queue that no longer exists (§4.6).
      if (outcome.kind === 'table-lost' || (outcome.kind === 'grant' && this.tableLost())) {
        throw new TableLostError(lock, 'the memory node restarted while this acquire waited in its queue');
      }
      if (outcome.kind === 'grant') {
        holding = true;
        return { ok: true, hold, remoteTs: outcome.remoteTs, handover: outcome.trace, waited: true };
      }
      if (outcome.kind === 'reset') return await this.withdraw(verbs, addr, acq, membership, tally, 'reset');
      // No grant in time: a failed CN, a lost grant or a corrupted queue. Reset (§4.4).
      return await this.abortWithReset(lock, add64(old, acq), member, seen.epoch, 'acquire-timeout', tally);
    } finally {
      // Every way out but a grant ends the membership (a failed verb included: nothing more follows).
      if (!holding) membership.leave();
    }
  }

  /** CQL_RELEASE. */
  async release(hold: CqlHold): Promise<void> {
    const done = this.inbox.begin();
    try {
      await this.releaseCql(hold);
    } finally {
      done();
    }
  }

  private async releaseCql(hold: CqlHold): Promise<void> {
    const H = this.header;
    const { lock } = hold;
    const verbs = new FabricVerbs(this.ports.verbs, lock);
    const rel = H.releaseDelta(hold.mode);
    let released: { old: bigint; data: Uint8Array };
    if (this.tableLost()) {
      // The hold went with the table (the memory node restarted): nothing is left to release.
      hold.membership?.leave();
      throw new TableLostError(lock, 'the memory node restarted while the lock was held');
    }
    try {
      released = await verbs.faaThenRead(this.table.header(lock), rel, this.table.queue(lock), this.table.queueBytes);
    } finally {
      hold.membership?.leave();
    }
    const { old, data } = released;
    const seen = H.decode(old);
    // Under reset the release is void (its FAA was this holder's acknowledgement).
    if (seen.resetId !== 0 || seen.epoch !== hold.epoch) return;
    if (H.lap(seen.qhead + 1) >= VER_INIT) {
      await this.startReset({ lock, guess: add64(old, rel), epoch: seen.epoch, reason: 'version-wrap' });
      return;
    }
    if (seen.qsize <= 1) return;
    const queue = new QueueSnapshot(H, data);
    const budget = new RefetchBudget(this.ports.clock, this.options.maxRefetch, this.refetchTimeoutNs);
    if (hold.mode === 'shared') await this.releaseShared(verbs, hold, seen, old, queue, budget);
    else await this.releaseExclusive(verbs, hold, seen, old, queue, budget);
  }

  /**
   * After an abort by someone else's reset: poll the header with READs (which, unlike a retried
   * FAA, never disturb the resetter's final CAS) until the reset id is clear, pausing in between.
   * A reset id naming a compute node the coordinator declared dead is a reset nobody will finish:
   * this client takes it over (§3.6).
   */
  async waitForResetEnd(lock: LockId, tally: VerbTally, pauseNs: () => number): Promise<void> {
    const done = this.inbox.begin();
    try {
      for (;;) {
        await this.ports.clock.sleep(pauseNs());
        if (await this.readHeaderPastReset(lock, tally)) return;
      }
    } finally {
      done();
    }
  }

  /** One READ of the header: true when no reset is in progress; takes over a dead resetter's reset. */
  private async readHeaderPastReset(lock: LockId, tally: VerbTally): Promise<boolean> {
    const verbs = new FabricVerbs(this.ports.verbs, lock);
    tally.verbs++;
    const word = await verbs.readWord(this.table.header(lock));
    const seen = this.header.decode(word);
    this.signals.observeHeader(lock, seen.epoch, seen.resetId);
    if (seen.resetId === 0) return true;
    if (this.resetter.resetterDead(seen.resetId)) await this.startReset({ lock, guess: word, epoch: seen.epoch, reason: 'resetter-failed' });
    return false;
  }

  /**
   * A local waiter waited a whole acquire timeout behind its own node's CQL hold (a crashed local
   * holder never releases it): reset the lock as a remote waiter would (§4.4). Returns true when
   * that hold is void — a reset of its epoch was seen, or the epoch already moved on.
   */
  async resetStuckHold(hold: CqlHold, tally: VerbTally): Promise<boolean> {
    if (this.signals.resetSeen(hold.lock, hold.epoch)) return true;
    const done = this.inbox.begin();
    try {
      tally.verbs++;
      const word = await new FabricVerbs(this.ports.verbs, hold.lock).readWord(this.table.header(hold.lock));
      const seen = this.header.decode(word);
      if (seen.epoch !== hold.epoch) return true;
      if (seen.resetId === 0) await this.startReset({ lock: hold.lock, guess: word, epoch: hold.epoch, reason: 'local-timeout' });
      return this.signals.resetSeen(hold.lock, hold.epoch);
    } finally {
      done();
    }
  }

  /** The node's gate is closed for `lock`: read the header (after a pause) until the reset is seen over. */
  private async waitAtGate(lock: LockId, tally: VerbTally): Promise<void> {
    let pauseNs = this.options.retryBackoffInitialNs;
    while (this.signals.gateClosed(lock)) {
      this.stats.gateReads++;
      await this.readHeaderPastReset(lock, tally);
      if (!this.signals.gateClosed(lock)) return;
      await this.ports.clock.sleep(Math.floor(pauseNs / 2 + this.ports.random.next() * (pauseNs / 2)));
      pauseNs = Math.min(this.options.retryBackoffMaxNs, pauseNs * 2);
    }
  }

  /** Earliest timestamp among waiters of other CNs, from one READ of header + queue (§5.3 prefetch). */
  async prefetchRemoteTs(lock: LockId, tally: VerbTally): Promise<number | undefined> {
    tally.verbs++;
    const verbs = new FabricVerbs(this.ports.verbs, lock);
    const bytes = await verbs.read(this.table.header(lock), HEADER_BYTES + this.table.queueBytes);
    const seen = this.header.decode(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
    if (seen.resetId !== 0) return undefined;
    const queue = new QueueSnapshot(this.header, bytes, HEADER_BYTES);
    return queue.earliestTs(seen.qhead + 1, seen.qhead + seen.qsize, this.ports.self.node);
  }

  private grantedAtOnce(mode: LockMode, seen: HeaderFields): boolean {
    if (seen.qsize === 0) return true;
    if (mode !== 'shared') return false;
    if (this.options.mutantReaderGrant) return seen.wcnt === 0 || seen.qsize > seen.wcnt;
    return seen.wcnt === 0;
  }

  /** A releasing reader: notify the successor only if it is a writer (Fig. 7 lines 8–13). */
  private async releaseShared(verbs: FabricVerbs, hold: CqlHold, seen: HeaderFields, old: bigint, queue: QueueSnapshot, budget: RefetchBudget): Promise<void> {
    const { qhead: h, qsize: s, wcnt: w } = seen;
    if (w === 0) return; // only reader holders remain
    const successor = h + 1;
    const guess = add64(old, this.header.releaseDelta('shared'));
    if (queue.state(successor) === 'valid') {
      const entry = queue.entry(successor);
      if (entry.mode === 'exclusive') this.notify(hold, [{ entry, pos: successor }], this.hint(queue, h, s, successor + 1));
      return;
    }
    // Locate all w writers among h+1 … h+s-1; every other position then belongs to a reader.
    for (;;) {
      if (this.signals.resetSeen(hold.lock, hold.epoch)) return;
      let found = 0;
      for (let pos = h + 1; pos < h + s; pos++) {
        const state = lapWrapped(this.header, pos) ? 'wrapped' : queue.state(pos);
        if (state === 'overwritten' || state === 'wrapped') {
          await this.startReset({ lock: hold.lock, guess, epoch: hold.epoch, reason: state === 'wrapped' ? 'version-wrap' : 'entry-overwritten' });
          return;
        }
        if (state === 'valid' && queue.entry(pos).mode === 'exclusive') found++;
      }
      if (found >= w) break;
      if (budget.exhausted()) {
        await this.startReset({ lock: hold.lock, guess, epoch: hold.epoch, reason: 'refetch-limit' });
        return;
      }
      if (!(await this.refetch(verbs, hold, queue))) return;
    }
    if (queue.state(successor) === 'valid' && queue.entry(successor).mode === 'exclusive') {
      this.notify(hold, [{ entry: queue.entry(successor), pos: successor }], this.hint(queue, h, s, successor + 1));
    }
  }

  /** A releasing writer: the successor, or the run of readers behind it (Fig. 7 lines 11–19). */
  private async releaseExclusive(verbs: FabricVerbs, hold: CqlHold, seen: HeaderFields, old: bigint, queue: QueueSnapshot, budget: RefetchBudget): Promise<void> {
    const { qhead: h, qsize: s } = seen;
    const guess = add64(old, this.header.releaseDelta('exclusive'));
    const first = await this.fetchValid(verbs, hold, queue, h + 1, guess, budget);
    if (!first) return;
    if (first.mode === 'exclusive' || s === 2) {
      this.notify(hold, [{ entry: first, pos: h + 1 }], this.hint(queue, h, s, h + 2));
      return;
    }
    const batch = [{ entry: first, pos: h + 1 }];
    for (let pos = h + 2; pos < h + s; pos++) {
      const entry = await this.fetchValid(verbs, hold, queue, pos, guess, budget);
      if (!entry) return;
      if (entry.mode === 'exclusive') {
        if (this.options.mutantBatchPastWriters) continue;
        break;
      }
      batch.push({ entry, pos });
    }
    const last = batch[batch.length - 1]?.pos ?? h + 1;
    this.notify(hold, batch, this.hint(queue, h, s, last + 1));
  }

  /**
   * FETCH_VALID: every entry behind a writer holder belongs to a waiter, so it becomes valid —
   * unless the waiter's node died between its FAA and its WRITE: hence the budget.
   */
  private async fetchValid(verbs: FabricVerbs, hold: CqlHold, queue: QueueSnapshot, pos: number, guess: bigint, budget: RefetchBudget): Promise<QueueEntry | undefined> {
    // Checked first: a never-written entry (0xFFFF) would pass as valid in lap 0xFFFF.
    if (lapWrapped(this.header, pos)) {
      await this.startReset({ lock: hold.lock, guess, epoch: hold.epoch, reason: 'version-wrap' });
      return undefined;
    }
    for (;;) {
      const state = queue.state(pos);
      if (state === 'valid') return queue.entry(pos);
      if (this.signals.resetSeen(hold.lock, hold.epoch)) return undefined;
      if (state === 'overwritten') {
        await this.startReset({ lock: hold.lock, guess, epoch: hold.epoch, reason: 'entry-overwritten' });
        return undefined;
      }
      if (budget.exhausted()) break;
      if (!(await this.refetch(verbs, hold, queue))) return undefined;
    }
    await this.startReset({ lock: hold.lock, guess, epoch: hold.epoch, reason: 'refetch-limit' });
    return undefined;
  }

  /**
   * One extra READ of header + queue. The header tells a releaser that a reset began (the member
   * it waits for may have withdrawn without writing), since only queued waiters get a RESET.
   */
  private async refetch(verbs: FabricVerbs, hold: CqlHold, queue: QueueSnapshot): Promise<boolean> {
    this.stats.extraReads++;
    const bytes = await verbs.read(this.table.header(hold.lock), HEADER_BYTES + this.table.queueBytes);
    const seen = this.header.decode(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
    if (seen.resetId !== 0 || seen.epoch !== hold.epoch) return false;
    queue.refresh(new QueueSnapshot(this.header, bytes, HEADER_BYTES));
    return true;
  }

  private hint(queue: QueueSnapshot, h: number, s: number, from: number): number | undefined {
    return this.withHints ? queue.earliestTs(from, h + s) : undefined;
  }

  /** Grants to the successor(s), under one `lock.handover` span whose context travels in each message. */
  private notify(hold: CqlHold, targets: readonly { entry: QueueEntry; pos: number }[], remoteTs: number | undefined): void {
    // The queue went with a lost table: its waiters were told by their own nodes (§4.6).
    if (this.tableLost()) return;
    const tag = this.tagFor(hold.lock);
    const span = this.ports.trace.startSpan('lock.handover', {
      attributes: {
        [LOCK_ATTR.protocol]: this.protocol,
        [LOCK_ATTR.lock]: hold.lock,
        [LOCK_ATTR.client]: clientKey(this.ports.self),
        'declock.handover.from_mode': hold.mode,
        'declock.handover.grants': targets.length,
        'declock.handover.to': targets.map((t) => clientKey(t.entry.client)).join(','),
      },
    });
    for (const { entry, pos } of targets) {
      this.ports.mailbox.send(grantMessage(entry.client, { lock: hold.lock, epoch: hold.epoch, pos, remoteTs, trace: span.context, tag }));
      this.stats.grantsSent++;
    }
    span.end();
  }

  private async withdraw(verbs: FabricVerbs, addr: RemoteAddr, acq: bigint, membership: Membership, tally: VerbTally, reason: CqlAbortReason): Promise<CqlAttempt> {
    tally.verbs++;
    this.stats.aborts++;
    try {
      await verbs.faa(addr, sub64(0n, acq));
    } finally {
      membership.leave();
    }
    return { ok: false, reason, backoff: true };
  }

  private async abortWithReset(
    lock: LockId,
    guess: bigint,
    member: { readonly delta: bigint; readonly membership: Membership },
    epoch: number,
    reason: ResetReason,
    tally: VerbTally,
  ): Promise<CqlAttempt> {
    this.stats.aborts++;
    tally.verbs++;
    const outcome = await this.startReset({ lock, guess, epoch, reason, member });
    return { ok: false, reason, backoff: outcome !== 'done' };
  }

  private startReset(request: ResetRequest): Promise<ResetOutcome> {
    this.stats.resetsStarted++;
    return this.resetter.reset(request);
  }
}

/** Refetches one release may still make: at most `maxRefetch` READs, and none after `timeoutNs`. */
class RefetchBudget {
  private used = 0;
  private readonly giveUpAtNs: number;

  constructor(
    private readonly clock: Clock,
    private readonly maxRefetch: number,
    timeoutNs: number,
  ) {
    this.giveUpAtNs = clock.nowNs() + timeoutNs;
  }

  /** Counts one refetch about to be made; true when none is left. */
  exhausted(): boolean {
    if (this.used >= this.maxRefetch || this.clock.nowNs() >= this.giveUpAtNs) return true;
    this.used++;
    return false;
  }
}

function lapWrapped(header: HeaderLayout, pos: number): boolean {
  return header.lap(pos) >= VER_INIT;
}
