import { Stopper } from '@lockfabric/ports';
import type { Clock, LockId, Mailbox, Message, NodeId, SpanContextRef } from '@lockfabric/ports';
import { epochOf, isDeclockMessage, isResetAck, parseGrant, tableTag, tagOf } from './messages.js';

export type WaitOutcome =
  | { readonly kind: 'grant'; readonly remoteTs: number | undefined; readonly trace: SpanContextRef | undefined }
  | { readonly kind: 'reset' }
  | { readonly kind: 'timeout' }
  /** The memory node restarted: the table this wait was queued in is gone. */
  | { readonly kind: 'table-lost' };

/** True when epoch `a` comes after `b` on a ring of 2^bits epochs. */
export function epochAfter(a: number, b: number, bits: number): boolean {
  const ring = 2 ** bits;
  const diff = (((a - b) % ring) + ring) % ring;
  return diff !== 0 && diff < ring / 2;
}

/** One waiter expecting a grant for (client, lock, epoch, position). */
export class PendingWait {
  readonly done: Promise<WaitOutcome>;
  private settle!: (outcome: WaitOutcome) => void;
  private settled = false;

  constructor(
    readonly key: string,
    readonly lock: LockId,
    readonly epoch: number,
    private readonly onSettled: (wait: PendingWait) => void,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
  }

  /** Resolves `timeout` at `deadlineNs` unless something else came first. */
  until(clock: Clock, deadlineNs: number): Promise<WaitOutcome> {
    // The timer is left to fire even when a grant came first (cheaper than cancelling it).
    if (!this.settled && Number.isFinite(deadlineNs)) void clock.sleep(Math.max(0, deadlineNs - clock.nowNs())).then(() => this.resolve({ kind: 'timeout' }));
    return this.done;
  }

  resolve(outcome: WaitOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled(this);
    this.settle(outcome);
  }
}

/**
 * One client's queue membership of a lock, from just before its acquire FAA is posted until the
 * verb that ends it (release FAA, withdrawal FAA, or the reset claim that takes it out) has
 * completed. `leave` is idempotent.
 */
export interface Membership {
  readonly lock: LockId;
  leave(): void;
}

/** The acknowledgements one reset collects: compute nodes whose RESET_ACK for `epoch` arrived. */
export interface AckCollector {
  readonly lock: LockId;
  readonly epoch: number;
  readonly tag: number;
  readonly nodes: ReadonlySet<NodeId>;
}

/**
 * What a compute node knows about grants and resets: the reset counter of each lock (the highest
 * epoch a RESET announced) and the waits of its clients. A RESET aborts every local wait of an
 * older epoch; a grant reaches only the wait of its exact (client, lock, epoch, position).
 *
 * For RESET_ACK it also counts its clients' queue memberships per lock (`join`), and keeps a
 * lock's gate closed from a RESET until a client sees the header of the new epoch: while it is
 * closed no client of this node starts an acquire FAA, so once the memberships reach zero this
 * node will not touch the header again before the reset is over.
 */
export class CnSignals {
  /** Grants that matched no wait (late, or for an acquire that gave up); dropped. */
  staleGrants = 0;
  /** RESET_ACKs that matched no reset this node is running; dropped. */
  staleAcks = 0;
  private readonly announced = new Map<LockId, number>();
  private readonly waits = new Map<string, PendingWait>();
  private readonly byLock = new Map<LockId, Set<PendingWait>>();
  private readonly members = new Map<LockId, number>();
  private readonly idle = new Map<LockId, (() => void)[]>();
  /** Locks whose announced reset (epoch) this node has not yet seen finish. */
  private readonly gates = new Map<LockId, number>();
  private readonly collectors = new Map<LockId, { lock: LockId; epoch: number; tag: number; nodes: Set<NodeId> }>();
  /** The incarnation of each memory node's table this board's state belongs to. */
  private readonly incarnations = new Map<NodeId, number>();
  private readonly tableListeners: ((memoryNode: NodeId) => void)[] = [];
  /** Memory-node restarts this node learnt of (and reset its state for). */
  tablesLost = 0;
  /** RESETs about another incarnation of the lock's table than the one this node follows; dropped. */
  foreignResets = 0;

  constructor(
    readonly node: NodeId,
    readonly epochBits: number,
    /** The memory node that holds a lock's words. */
    private readonly memoryNodeOf: (lock: LockId) => NodeId = () => 0,
  ) {}

  /**
   * DecLock §4.6 (MN failures): a memory node that restarted serves a re-initialised table, and
   * every lock on it must be reset before a new operation uses it. Its header and queue come back
   * zeroed, which is the reset state; what is left is this node's own state about the old table
   * — reset counters, gates, waits, and whatever listeners keep (local locks) — which goes now.
   * Called with a client's pinned incarnations before each operation: a newer one than this board
   * follows is a restart. Returns true when something was reset.
   */
  followTables(pins: ReadonlyMap<NodeId, number> | undefined): boolean {
    let lost = false;
    for (const [memoryNode, incarnation] of pins ?? []) {
      const known = this.incarnations.get(memoryNode);
      this.incarnations.set(memoryNode, known === undefined ? incarnation : Math.max(known, incarnation));
      if (known === undefined || incarnation <= known) continue;
      lost = true;
      this.tablesLost++;
      this.forgetTable(memoryNode);
      for (const listener of this.tableListeners) listener(memoryNode);
    }
    return lost;
  }

  /** Runs `listener` whenever a memory node's table is found lost (after this board forgot it). */
  onTableLost(listener: (memoryNode: NodeId) => void): void {
    this.tableListeners.push(listener);
  }

  /** The tag messages about `lock` carry for the table this board follows (0: none known). */
  tagFor(lock: LockId): number {
    return tableTag(this.incarnations.get(this.memoryNodeOf(lock)));
  }

  private followsOtherTable(lock: LockId, tag: number): boolean {
    return this.incarnations.has(this.memoryNodeOf(lock)) && tag !== this.tagFor(lock);
  }

  private forgetTable(memoryNode: NodeId): void {
    const onNode = (lock: LockId) => this.memoryNodeOf(lock) === memoryNode;
    for (const lock of [...this.announced.keys()]) if (onNode(lock)) this.announced.delete(lock);
    for (const lock of [...this.gates.keys()]) if (onNode(lock)) this.gates.delete(lock);
    for (const lock of [...this.collectors.keys()]) if (onNode(lock)) this.collectors.delete(lock);
    for (const [lock, waits] of [...this.byLock]) if (onNode(lock)) for (const wait of [...waits]) wait.resolve({ kind: 'table-lost' });
  }

  /** "RESET seen": a reset of the epoch this operation runs in has been announced to this CN. */
  resetSeen(lock: LockId, epoch: number): boolean {
    const announced = this.announced.get(lock);
    return announced !== undefined && epochAfter(announced, epoch, this.epochBits);
  }

  /** Raises the lock's reset counter to `epoch`, closes its gate and aborts waits of older epochs. */
  announce(lock: LockId, epoch: number): void {
    const current = this.announced.get(lock);
    if (current !== undefined && !epochAfter(epoch, current, this.epochBits)) return;
    this.announced.set(lock, epoch);
    this.gates.set(lock, epoch);
    for (const wait of [...(this.byLock.get(lock) ?? [])]) {
      if (epochAfter(epoch, wait.epoch, this.epochBits)) wait.resolve({ kind: 'reset' });
    }
  }

  register(client: number, lock: LockId, epoch: number, pos: number, tag = 0): PendingWait {
    const key = waitKey(client, lock, epoch, pos, tag);
    const wait = new PendingWait(key, lock, epoch, (settled) => this.forget(settled));
    this.waits.set(key, wait);
    let set = this.byLock.get(lock);
    if (!set) {
      set = new Set();
      this.byLock.set(lock, set);
    }
    set.add(wait);
    if (this.resetSeen(lock, epoch)) wait.resolve({ kind: 'reset' });
    return wait;
  }

  /** True while a reset of `lock` announced to this node has not been seen finished: no acquire FAA may start. */
  gateClosed(lock: LockId): boolean {
    return this.gates.has(lock);
  }

  /**
   * A client read the header of `lock`: once it shows no reset in progress in the announced
   * epoch or a later one, the reset is over and the gate opens. A header of an older epoch is a
   * READ that left before the reset's claim landed and proves nothing.
   */
  observeHeader(lock: LockId, epoch: number, resetId: number): void {
    const gate = this.gates.get(lock);
    if (gate === undefined || resetId !== 0) return;
    if (epoch === gate || epochAfter(epoch, gate, this.epochBits)) this.gates.delete(lock);
  }

  /** Starts a client's queue membership of `lock` (call right before posting the acquire FAA); `onLeave` runs when it ends. */
  join(lock: LockId, onLeave?: () => void): Membership {
    this.members.set(lock, (this.members.get(lock) ?? 0) + 1);
    let left = false;
    return {
      lock,
      leave: () => {
        if (left) return;
        left = true;
        onLeave?.();
        const n = (this.members.get(lock) ?? 1) - 1;
        if (n > 0) {
          this.members.set(lock, n);
          return;
        }
        this.members.delete(lock);
        const waiting = this.idle.get(lock);
        this.idle.delete(lock);
        for (const resolve of waiting ?? []) resolve();
      },
    };
  }

  /** Queue memberships of `lock` held by this node's clients. */
  membersOf(lock: LockId): number {
    return this.members.get(lock) ?? 0;
  }

  /** Resolves once no client of this node is a queue member of `lock`. */
  whenIdle(lock: LockId): Promise<void> {
    if (!this.members.has(lock)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.idle.get(lock) ?? [];
      list.push(resolve);
      this.idle.set(lock, list);
    });
  }

  /** A reset of `lock` into `epoch` run by a client of this node starts collecting RESET_ACKs. */
  collectAcks(lock: LockId, epoch: number, tag = 0): AckCollector {
    const collector = { lock, epoch, tag, nodes: new Set<NodeId>() };
    this.collectors.set(lock, collector);
    return collector;
  }

  stopCollecting(collector: AckCollector): void {
    if (this.collectors.get(collector.lock) === collector) this.collectors.delete(collector.lock);
  }

  deliver(message: Message): void {
    if (isResetAck(message)) {
      const collector = this.collectors.get(message.lock);
      if (collector && message.epoch !== undefined && epochOf(message) === collector.epoch && tagOf(message) === collector.tag) collector.nodes.add(message.from.node);
      else this.staleAcks++;
      return;
    }
    if (message.kind === 'reset') {
      if (message.epoch === undefined) return;
      // A reset of the lost table (or of one this node has not followed yet) must not gate this one.
      if (this.followsOtherTable(message.lock, tagOf(message))) {
        this.foreignResets++;
        return;
      }
      this.announce(message.lock, epochOf(message));
      return;
    }
    const grant = parseGrant(message);
    const wait = grant ? this.waits.get(waitKey(message.to.client, grant.lock, grant.epoch, grant.pos, grant.tag ?? 0)) : undefined;
    if (!grant || !wait) {
      this.staleGrants++;
      return;
    }
    wait.resolve({ kind: 'grant', remoteTs: grant.remoteTs, trace: grant.trace });
  }

  private forget(wait: PendingWait): void {
    this.waits.delete(wait.key);
    const set = this.byLock.get(wait.lock);
    set?.delete(wait);
    if (set && set.size === 0) this.byLock.delete(wait.lock);
  }
}

function waitKey(client: number, lock: LockId, epoch: number, pos: number, tag: number): string {
  return `${client}|${lock}|${epoch}|${pos}|${tag}`;
}

const PUMP_STOPPED = 'client inbox: no lock operation under way';

/**
 * Drains one client's mailbox into its node's signal board while the client has a lock operation
 * under way (`begin` … end), so grants and RESET_ACKs reach the board and late messages do not
 * pile up in the bounded inbox. When the client has nothing under way the pump stops: a mailbox
 * outlives the client on a live compute node (the next run's client of the same index gets the
 * same inbox), and a pump left waiting there would take that client's grants and drop them as
 * stale. Messages that arrive in between wait in the inbox for the next operation's pump.
 */
export class ClientInbox {
  private active = 0;
  private stop: Stopper | undefined;

  constructor(
    private readonly mailbox: Mailbox,
    private readonly signals: CnSignals,
  ) {}

  /** A lock operation starts; the returned function ends it (idempotent). */
  begin(): () => void {
    this.active++;
    if (!this.stop) {
      const stop = new Stopper();
      this.stop = stop;
      void this.pump(stop);
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active--;
      if (this.active === 0 && this.stop) {
        // Once per lock operation: a Stopper, as an AbortController here cost ~8 % of a sim run.
        this.stop.stop(PUMP_STOPPED);
        this.stop = undefined;
      }
    };
  }

  /** True while a pump is receiving for this client. */
  get pumping(): boolean {
    return this.stop !== undefined;
  }

  private async pump(stop: Stopper): Promise<void> {
    try {
      while (!stop.aborted) {
        const message = await this.mailbox.receive(isDeclockMessage, { signal: stop });
        if (!message) break;
        this.signals.deliver(message);
      }
    } catch {
      // the mailbox is gone (substrate shut down)
    } finally {
      // Stopped by the mailbox rather than by `begin`'s end: the next operation starts a new pump.
      if (this.stop === stop) this.stop = undefined;
    }
  }
}
