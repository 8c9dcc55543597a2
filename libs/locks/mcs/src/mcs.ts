import { AcquireDeadline, AcquireSpan, LOCK_ATTR, OptionReader, isUncertain, queueRecoveryGroup, waitWhileLocal } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions, QueueMemberState, QueueRecoveryGroup, QueueRecoveryMember } from '@lockfabric/locks-common';
import { ConfigError, FabricAccessError, LockAbortedError, Stopper, TableLostError, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, RemoteAddr } from '@lockfabric/ports';
import { GrantNotHeldError } from './errors.js';
import {
  ALL_BITS,
  ENDPOINT_INDEX_BITS,
  ENTRY_BYTES,
  FREE,
  GENERATION_COUNT,
  RELEASE_COUNTER_OFFSET,
  clientOf,
  decodePointer,
  encodePointer,
  pointerGeneration,
  withGeneration,
} from './lock-entry.js';
import { GRANT_OFFSET, HANDOVER_OFFSET, NEXT_OFFSET, decodeHandover, encodeHandover, fieldAddr, queueNodesPerSlot } from './queue-node.js';

/** Queue nodes a pointer can name. */
const MAX_QUEUE_NODES = 2 ** ENDPOINT_INDEX_BITS;

export interface McsOptions {
  /** Pause between two CPU loads of a client's own queue node while it waits. */
  readonly pollIntervalNs: number;
  /** FAA the entry's release counter on every handover, as the ShiftLock artifact's MCS does. */
  readonly releaseCounter: boolean;
  /**
   * How long a release waits for a successor that swapped itself into the tail to link in, before
   * it takes that successor for dead and cuts the queue after itself (see `passOn`).
   */
  readonly releaseLinkTimeoutNs: number;
  /**
   * Queue nodes a client may use at once (at most what its descriptor slot holds, 16): one per
   * lock it holds or waits for. Fewer make a client with abandoned waits wait for a free node.
   */
  readonly queueNodes: number;
  /** Test-only mutant: the original unbounded wait for the successor's link (hangs if it died). */
  readonly mutantUnboundedReleaseWait: boolean;
  /** Test-only mutant: reuse a queue node without clearing its `next` and `grant` words. */
  readonly mutantSkipNodeReset: boolean;
  /** Test-only mutant: hand the lock over (and take a handover) on a queue whose lock table was lost. */
  readonly mutantHandoverAcrossRestart: boolean;
  /** Test-only mutant: a failed enqueue swap did not run, so its queue node is reused as it was. */
  readonly mutantReuseAfterFailedSwap: boolean;
  /** Test-only mutant: a release CAS on the tail that failed `unreachable` is not read back (the node may stay the tail). */
  readonly mutantNoReadBack: boolean;
  /** Test-only mutant: an acquire held back by a recovery's gate polls it every pollIntervalNs (one simulated event each). */
  readonly mutantPollGate: boolean;
}

/**
 * 2 ms: the link is one WRITE issued right after the successor's swap returns (a few µs on `sim`),
 * so only a dead or stopped successor takes this long; waiting longer only delays the survivors.
 */
/** 50 ms: a real-time (embedded) scheduler under load must not cut a live successor; sim tests set less. */
export const DEFAULT_RELEASE_LINK_TIMEOUT_NS = 50_000_000;

export const MCS_OPTION_HELP = {
  pollIntervalNs: 'ns between two local loads of the own queue node while waiting (default 200); the sim skips the loads that would see no change',
  releaseCounter: 'true to FAA a per-lock release counter on each handover, like the ShiftLock artifact (default false)',
  releaseLinkTimeoutNs: `ns a release waits for an enqueued successor to link in before cutting the queue after itself (default ${DEFAULT_RELEASE_LINK_TIMEOUT_NS})`,
  queueNodes: `queue nodes a client uses at once, one per lock held or waited for (default and most ${MAX_QUEUE_NODES}: a 2PL transaction's 16 locks)`,
  mutantUnboundedReleaseWait: 'test-only: wait for the successor link forever, as before the fix (hangs if the successor died)',
  mutantSkipNodeReset: 'test-only: reuse a queue node without clearing it (broken on purpose)',
  mutantHandoverAcrossRestart: 'test-only: hand over and take grants on a queue whose memory node restarted (broken on purpose)',
  mutantReuseAfterFailedSwap: 'test-only: reuse a queue node whose enqueue swap failed under the same link generation (broken on purpose)',
  mutantNoReadBack: 'test-only: do not read the tail back after a release CAS failed unreachable (leaks locks on lost completions)',
  mutantPollGate: 'test-only: poll a closed recovery gate every pollIntervalNs instead of sleeping until it opens (slow on sim)',
};

export function readMcsOptions(options?: ProtocolOptions): McsOptions {
  const reader = new OptionReader('mcs', options);
  const parsed: McsOptions = {
    pollIntervalNs: reader.number('pollIntervalNs', 200, { min: 1 }),
    releaseCounter: reader.boolean('releaseCounter', false),
    releaseLinkTimeoutNs: reader.number('releaseLinkTimeoutNs', DEFAULT_RELEASE_LINK_TIMEOUT_NS, { min: 1 }),
    queueNodes: reader.number('queueNodes', MAX_QUEUE_NODES, { integer: true, min: 1, max: MAX_QUEUE_NODES }),
    mutantUnboundedReleaseWait: reader.boolean('mutantUnboundedReleaseWait', false),
    mutantSkipNodeReset: reader.boolean('mutantSkipNodeReset', false),
    mutantHandoverAcrossRestart: reader.boolean('mutantHandoverAcrossRestart', false),
    mutantReuseAfterFailedSwap: reader.boolean('mutantReuseAfterFailedSwap', false),
    mutantNoReadBack: reader.boolean('mutantNoReadBack', false),
    mutantPollGate: reader.boolean('mutantPollGate', false),
  };
  reader.done();
  return parsed;
}

export interface McsGrant extends Grant {
  /** The lock's entry on its memory node. */
  readonly addr: RemoteAddr;
  /** Which queue node of this client's descriptor slot stands in the lock's queue. */
  readonly queueNode: number;
  /** MCS is a mutex: shared acquires are held exclusively. */
  readonly heldAs: 'exclusive';
}

/**
 * What one of the client's queue nodes is doing. `claimed`: its swap into the tail is in flight;
 * `linking`: its link WRITE into the predecessor is. `abandoned`: its acquire gave up (timeout or
 * abort) after enqueueing, which MCS cannot undo, so it waits on in the background and passes the
 * lock on as soon as it gets it. `broken`: a verb failed mid-protocol; the node is reused only
 * after a recovery reset the queues (QueueRecoveryMember.abortWaiters).
 * A waiter polls for its grant only while its own state object is still in place: a recovery abort
 * replaces it, and the poller then leaves without taking the lock.
 */
type QueueNodeState =
  | { readonly kind: 'free' | 'claimed' | 'broken' }
  | { readonly kind: 'linking' | 'waiting' | 'held' | 'releasing' | 'abandoned'; readonly lock: LockId; readonly addr: RemoteAddr };

/**
 * The MCS queue lock on RDMA (ShiftLock's Algorithm 1, the "MCS" baseline of ShiftLock and ALock).
 *
 * Acquire: fetch-and-store on the tail word (masked CAS with compare mask 0). A free word means
 * granted; otherwise WRITE my pointer into the predecessor's `next` and poll my own `grant` word
 * with CPU loads. Release: with a known successor, WRITE the grant into its queue node; without,
 * CAS the tail from me back to 0, and if that fails (a successor is mid-enqueue) wait for its link
 * and hand over. Uncontended: one masked CAS to acquire, one CAS to release, all on the memory node.
 */
export class McsClient implements LockClient<McsGrant>, QueueRecoveryMember {
  private readonly nodes: QueueNodeState[];
  /**
   * This node's clients of the run, as the coordinator's queue-lock recovery sees them; only when
   * the protocol that owns this client takes part in that recovery (MCS does; RMA-RW's writer
   * queue does not, its rule being `none`). Without one, nothing gates or aborts this client.
   */
  private readonly recovery: QueueRecoveryGroup | undefined;
  /** Why waiting acquires were aborted by recovery, per queue node (read by the poller it stops). */
  private readonly abortReasons = new Map<number, string>();
  /** Wakes the local wait of a queue node whose state a recovery abort replaced. */
  private readonly wakeups = new Map<number, Stopper>();
  /** Link generation of each queue node: bumped when a release gives up on an unlinked successor. */
  private readonly generations: number[];
  private readonly key: string;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: McsOptions,
    recovery?: QueueRecoveryGroup,
  ) {
    const count = Math.min(queueNodesPerSlot(ports.descriptors.slotBytes), options.queueNodes);
    if (count < 1) throw new ConfigError([`mcs needs descriptor slots of at least 32 bytes, this substrate has ${ports.descriptors.slotBytes}`]);
    this.nodes = Array.from({ length: count }, () => ({ kind: 'free' }) as const);
    this.generations = Array.from({ length: count }, () => 0);
    this.key = clientKey(ports.self);
    this.recovery = recovery;
    recovery?.register(this);
  }

  recoveryState(): QueueMemberState {
    const count = (...kinds: QueueNodeState['kind'][]) => this.nodes.filter((n) => kinds.includes(n.kind)).length;
    return { holding: count('held', 'releasing'), waiting: count('waiting', 'abandoned'), busy: count('claimed', 'linking'), broken: count('broken') };
  }

  abortWaiters(reason: string): number {
    let aborted = 0;
    this.nodes.forEach((node, index) => {
      if (node.kind === 'waiting' || node.kind === 'abandoned') {
        aborted++;
        this.abortReasons.set(index, reason);
        this.nodes[index] = { kind: 'free' };
        this.wakeups.get(index)?.stop(reason);
      } else if (node.kind === 'broken') this.nodes[index] = { kind: 'free' };
    });
    return aborted;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<McsGrant> {
    const addr = lockAddress(this.ports.locks, lock);
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'mcs', lock, mode, this.key);
    try {
      deadline.check();
      // Claim and enqueue without an await before the first verb when a node is free: the `sim`
      // harness starts its scheduler right after starting the clients, and needs an event queued.
      const index = (this.recovery?.gated ? undefined : this.claimFreeQueueNode()) ?? (await this.waitForQueueNode(lock, deadline, op));
      await this.enqueueAndWait(index, lock, addr, deadline, op);
      op.granted();
      return { lock, mode, addr, queueNode: index, heldAs: 'exclusive' };
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  async release(grant: McsGrant): Promise<void> {
    const state = this.nodes[grant.queueNode];
    if (!state || state.kind !== 'held' || state.lock !== grant.lock) {
      throw new GrantNotHeldError(grant.lock, `queue node ${grant.queueNode} of client ${this.key} does not hold it (${state?.kind ?? 'no such node'})`);
    }
    this.nodes[grant.queueNode] = { kind: 'releasing', lock: grant.lock, addr: grant.addr };
    // Judged at the release's start: a table lost before it took this hold (and its queue) with it.
    const lost = this.tableLost();
    await this.passOn(grant.queueNode, grant.lock, grant.addr);
    if (lost) throw new TableLostError(grant.lock, 'the memory node restarted while the lock was held; its queue went with the table');
  }

  private claimFreeQueueNode(): number | undefined {
    const index = this.nodes.findIndex((node) => node.kind === 'free');
    if (index < 0) return undefined;
    this.nodes[index] = { kind: 'claimed' };
    return index;
  }

  /**
   * A recovery holds new acquires back (until its end or the deadline), or all queue nodes are busy:
   * then wait only while one will free up by itself (abandoned, or being released).
   */
  private async waitForQueueNode(lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<number> {
    for (;;) {
      const recovery = this.recovery;
      if (recovery?.gated) {
        op.retries++;
        // Sleep until the gate opens, at the poll that would have seen it open (a recovery lasts
        // about a detection timeout: polling it cost a simulated event every pollIntervalNs).
        if (this.options.mutantPollGate) await deadline.pause(this.options.pollIntervalNs);
        else await deadline.pauseUntilWoken((wake) => recovery.onOpen(wake), this.options.pollIntervalNs);
        if (this.recovery?.gated) continue;
        const index = this.claimFreeQueueNode();
        if (index !== undefined) return index;
      }
      if (!this.nodes.some((node) => node.kind === 'abandoned' || node.kind === 'releasing')) {
        throw new LockAbortedError(lock, `client ${this.key} already holds or waits on ${this.nodes.length} MCS locks, all the queue nodes its descriptor slot has room for`);
      }
      op.retries++;
      await deadline.pause(this.options.pollIntervalNs);
      const index = this.recovery?.gated ? undefined : this.claimFreeQueueNode();
      if (index !== undefined) return index;
    }
  }

  private async enqueueAndWait(index: number, lock: LockId, addr: RemoteAddr, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    const { verbs, descriptors } = this.ports;
    const slot = descriptors.self;
    const me = this.pointer(index);
    let previous: bigint;
    try {
      // MCS's "I.next := nil; I.locked := false" before joining. The CPU stores are issued before
      // the doorbell, as on hardware; peers learn this node's address only through the swap, so
      // their WRITEs land after it.
      const resets = this.options.mutantSkipNodeReset
        ? []
        : [verbs.cpu.store(fieldAddr(slot, index, NEXT_OFFSET), 0n), verbs.cpu.store(fieldAddr(slot, index, GRANT_OFFSET), 0n)];
      this.ports.phases?.enter('initial-atomic');
      op.verbs++;
      // Fetch-and-store: compare nothing, swap every bit (ExtCAS with compare mask 0).
      const swap = verbs.maskedCas(addr, 8, 0n, me, 0n, ALL_BITS, { lock });
      [, previous] = await Promise.all([Promise.all(resets), swap]);
    } catch (error) {
      // A failed swap may still have run (live: a queue pair's broken stream fails every
      // outstanding request, answered or not), leaving this node in the tail where a successor
      // links into it. Bump its generation so such a link is stale when the node is reused.
      if (!this.options.mutantReuseAfterFailedSwap) this.generations[index] = ((this.generations[index] ?? 0) + 1) % GENERATION_COUNT;
      this.nodes[index] = { kind: 'free' };
      throw error;
    }
    const predecessor = decodePointer(previous);
    if (!predecessor) {
      this.nodes[index] = { kind: 'held', lock, addr };
      return;
    }
    this.nodes[index] = { kind: 'linking', lock, addr };
    try {
      this.ports.phases?.enter('notify-predecessor');
      op.verbs++;
      // The link names me but carries the predecessor's generation from the tail word: a link that
      // arrives after the predecessor gave up on it is recognisably stale (see passOn).
      const link = withGeneration(me, pointerGeneration(previous));
      await verbs.write(fieldAddr(descriptors.of(clientOf(predecessor)), predecessor.index, NEXT_OFFSET), u64Bytes(link), { lock });
    } catch (error) {
      this.nodes[index] = { kind: 'broken' };
      throw error;
    }
    const waiting: QueueNodeState = { kind: 'waiting', lock, addr };
    this.nodes[index] = waiting;
    this.ports.phases?.enter('wait-predecessor');
    const grantAddr = fieldAddr(slot, index, GRANT_OFFSET);
    const wakeup = this.wakeupFor(index);
    let grant = await verbs.cpu.load(grantAddr);
    for (;;) {
      if (this.nodes[index] !== waiting) throw new LockAbortedError(lock, this.abortReasons.get(index) ?? 'queue reset by recovery');
      if (grant !== 0n) break;
      try {
        // Spin on the own grant word: only the poll that sees it written costs a step.
        await deadline.waitWhile(verbs.cpu, grantAddr, grant, this.options.pollIntervalNs, wakeup);
      } catch (error) {
        if (this.nodes[index] !== waiting) throw new LockAbortedError(lock, this.abortReasons.get(index) ?? 'queue reset by recovery');
        const abandoned: QueueNodeState = { kind: 'abandoned', lock, addr };
        this.nodes[index] = abandoned;
        void this.finishAbandoned(index, abandoned, lock, addr);
        throw error;
      }
      grant = await verbs.cpu.load(grantAddr);
    }
    // Held from here, before the next await: a recovery abort must see a holder, not a waiter.
    this.nodes[index] = { kind: 'held', lock, addr };
    const traceHigh = await verbs.cpu.load(fieldAddr(slot, index, HANDOVER_OFFSET));
    const traceLow = await verbs.cpu.load(fieldAddr(slot, index, HANDOVER_OFFSET + 8));
    const handover = decodeHandover(traceHigh, traceLow, grant);
    if (handover) op.span.addLink(handover, { 'lockfabric.link.role': 'previous-holder' });
    // A handover never crosses a table incarnation: this queue was formed on a table the memory
    // node has since lost, and the new table may have granted the lock to someone else meanwhile.
    // Pass the grant down the old queue (each waiter there refuses it the same way) and fail.
    if (this.tableLost()) {
      this.nodes[index] = { kind: 'releasing', lock, addr };
      void this.passOn(index, lock, addr).catch(() => undefined);
      throw new TableLostError(lock, 'the memory node restarted while this acquire waited in its queue');
    }
  }

  /** An acquire gave up after enqueueing: wait for the grant anyway, then pass the lock straight on (unless recovery aborts it). */
  private async finishAbandoned(index: number, state: QueueNodeState, lock: LockId, addr: RemoteAddr): Promise<void> {
    const grantAddr = fieldAddr(this.ports.descriptors.self, index, GRANT_OFFSET);
    const wakeup = this.wakeupFor(index);
    try {
      for (;;) {
        const grant = await this.ports.verbs.cpu.load(grantAddr);
        if (this.nodes[index] !== state) return;
        if (grant !== 0n) break;
        await waitWhileLocal(this.ports.clock, this.ports.verbs.cpu, [{ addr: grantAddr, value: grant }], { pollNs: this.options.pollIntervalNs, signals: [wakeup] });
      }
      this.nodes[index] = { kind: 'releasing', lock, addr };
      await this.passOn(index, lock, addr);
    } catch {
      if (this.nodes[index]?.kind === 'releasing') this.nodes[index] = { kind: 'broken' };
    }
  }

  /**
   * MCS release of queue node `index`, which holds `lock`.
   *
   * Failures: when the CAS finds a successor in the tail that never links in (it died between its
   * swap and its link WRITE), the wait for the link ends after `releaseLinkTimeoutNs`. Then the
   * releaser cuts the queue after itself by CASing the tail, whatever it now names, back to free.
   * Everyone cut off sits behind the unlinked successor, so only that successor could ever hand
   * them the lock; it never gets the lock itself, because this node's generation is bumped and a
   * late link (carrying the old generation) is ignored. So the cut-off waiters are never granted
   * and exclusion holds even when the successor was only slow; their acquires end with
   * LockTimeoutError, and new acquirers find the lock free.
   */
  private async passOn(index: number, lock: LockId, addr: RemoteAddr): Promise<void> {
    const { verbs, descriptors } = this.ports;
    try {
      // A successor already linked in gets the lock without an atomic on the tail.
      this.ports.phases?.enter('notify-successor');
      let next = await this.loadLink(index);
      if (next === FREE && this.tableLost()) {
        // The tail word went with the table: nobody can CAS it back. A successor that swapped in on
        // the old table but has not linked yet is cut off like a dead one (a late link is stale).
        this.generations[index] = ((this.generations[index] ?? 0) + 1) % GENERATION_COUNT;
        this.nodes[index] = { kind: 'free' };
        return;
      }
      if (next === FREE) {
        const me = this.pointer(index);
        this.ports.phases?.enter('initial-atomic');
        let tail: bigint | typeof UNCERTAIN;
        try {
          tail = await verbs.cas(addr, me, FREE, { lock });
        } catch (error) {
          if (!isUncertain(error) || this.options.mutantNoReadBack) throw error;
          tail = await this.readBackTail(addr, lock, me);
        }
        if (tail === me) {
          this.nodes[index] = { kind: 'free' };
          return;
        }
        if (tail === UNCERTAIN) {
          // Our CAS may have freed the lock: a successor that swapped in before it links in and
          // gets the lock; with none, leave. Never cut: the tail may be a later holder's.
          this.ports.phases?.enter('notify-successor');
          next = await this.waitForLink(index);
          if (next === FREE) {
            this.generations[index] = ((this.generations[index] ?? 0) + 1) % GENERATION_COUNT;
            this.nodes[index] = { kind: 'free' };
            return;
          }
        } else {
          // The tail moved past me: a successor swapped itself in and is about to link.
          this.ports.phases?.enter('notify-successor');
          next = await this.waitForLink(index);
          if (next === FREE) {
            await this.cutQueueAfter(index, lock, addr, tail);
            return;
          }
        }
      }
      const successor = decodePointer(next);
      if (!successor) throw new RangeError(`mcs queue node ${this.key}#${index} holds a bad successor pointer ${next}`);
      const span = this.ports.trace.startSpan('lock.handover', {
        attributes: {
          [LOCK_ATTR.protocol]: 'mcs',
          [LOCK_ATTR.lock]: lock,
          'lockfabric.handover.from': this.key,
          'lockfabric.handover.to': clientKey(clientOf(successor)),
        },
      });
      try {
        const grantWrite = verbs.write(fieldAddr(descriptors.of(clientOf(successor)), successor.index, HANDOVER_OFFSET), encodeHandover(span.context), { lock });
        const counter = this.options.releaseCounter ? verbs.faa({ ...addr, offset: addr.offset + RELEASE_COUNTER_OFFSET }, 1n, { lock }) : undefined;
        await Promise.all([grantWrite, counter]);
      } catch (error) {
        span.recordError(error);
        // The successor's node was declared dead: the grant is lost with it, the lock stays blocked
        // until the coordinator's recovery resets the queue. This release is over all the same.
        if (!(error instanceof FabricAccessError && this.recovery?.isDead(successor.node) === true)) throw error;
        span.setAttribute('lockfabric.handover.lost_to_dead_node', true);
      } finally {
        span.end();
      }
      this.nodes[index] = { kind: 'free' };
    } catch (error) {
      this.nodes[index] = { kind: 'broken' };
      throw error;
    }
  }

  /**
   * After the release's CAS of the tail (me → free) failed `unreachable`, which it may have run:
   * once the link is back, read the tail. Still me means the CAS did not run (the node is
   * `releasing`, so no new swap names it): send it again and return what it found. Anything else
   * is UNCERTAIN: the CAS ran, or a successor swapped in behind me; the caller cannot tell which.
   */
  private async readBackTail(addr: RemoteAddr, lock: LockId, me: bigint): Promise<bigint | typeof UNCERTAIN> {
    const { verbs, clock } = this.ports;
    let waitNs = READ_BACK_FIRST_WAIT_NS;
    for (let attempt = 1; ; attempt++) {
      await clock.sleep(waitNs);
      waitNs = Math.min(waitNs * 2, READ_BACK_MAX_WAIT_NS);
      try {
        if (u64Of(await verbs.read(addr, 8, { lock })) !== me) return UNCERTAIN;
        return await verbs.cas(addr, me, FREE, { lock });
      } catch (error) {
        if (!isUncertain(error) || attempt >= READ_BACK_ATTEMPTS) throw error;
      }
    }
  }

  /** True when a memory node this client's verbs were bound to has restarted since (never under the mutant). */
  private tableLost(): boolean {
    return !this.options.mutantHandoverAcrossRestart && (this.ports.tables?.lost() ?? false);
  }

  /** True when a successor of this generation has linked in behind the grant's queue node (RMA-RW's phase decision). */
  async successorLinked(grant: McsGrant): Promise<boolean> {
    return (await this.loadLink(grant.queueNode)) !== FREE;
  }

  /** The successor link of queue node `index`; FREE when unset or stale (an older generation's). */
  private async loadLink(index: number): Promise<bigint> {
    return this.linkOf(index, await this.ports.verbs.cpu.load(fieldAddr(this.ports.descriptors.self, index, NEXT_OFFSET)));
  }

  private linkOf(index: number, next: bigint): bigint {
    return next !== FREE && pointerGeneration(next) === this.generations[index] ? next : FREE;
  }

  /** Waits for the successor's link, for at most `releaseLinkTimeoutNs` (FREE if it never came). */
  private async waitForLink(index: number): Promise<bigint> {
    const { clock, verbs } = this.ports;
    const giveUpAtNs = this.options.mutantUnboundedReleaseWait ? Infinity : clock.nowNs() + this.options.releaseLinkTimeoutNs;
    const nextAddr = fieldAddr(this.ports.descriptors.self, index, NEXT_OFFSET);
    let word: bigint;
    let next: bigint;
    while ((next = this.linkOf(index, (word = await verbs.cpu.load(nextAddr)))) === FREE) {
      if (giveUpAtNs - clock.nowNs() <= 0) return FREE;
      // Woken by the successor's link WRITE (or a stale one, which linkOf then ignores).
      await waitWhileLocal(clock, verbs.cpu, [{ addr: nextAddr, value: word }], { untilNs: giveUpAtNs, pollNs: this.options.pollIntervalNs });
    }
    return next;
  }

  /** A fresh wake-up for queue node `index`'s next wait (an abort of an earlier wait stays spent). */
  private wakeupFor(index: number): Stopper {
    const wakeup = new Stopper();
    this.wakeups.set(index, wakeup);
    return wakeup;
  }

  /**
   * The successor never linked: free the lock by CASing the tail from whatever it names to FREE.
   * A failed CAS means yet another waiter joined behind the dead one; retry with the new tail.
   */
  private async cutQueueAfter(index: number, lock: LockId, addr: RemoteAddr, observedTail: bigint): Promise<void> {
    // From here on a link to this node's current generation is stale: bump it before the tail is
    // reset, so a late link is ignored even if the node is reused at once.
    this.generations[index] = ((this.generations[index] ?? 0) + 1) % GENERATION_COUNT;
    const span = this.ports.trace.startSpan('lock.queue-cut', {
      attributes: { [LOCK_ATTR.protocol]: 'mcs', [LOCK_ATTR.lock]: lock, 'lockfabric.handover.from': this.key, 'lockfabric.mcs.unlinked_tail': observedTail.toString(16) },
    });
    try {
      let tail = observedTail;
      let attempts = 1;
      for (;;) {
        const seen = await this.ports.verbs.cas(addr, tail, FREE, { lock });
        if (seen === tail || seen === FREE) break;
        tail = seen;
        attempts++;
      }
      span.setAttribute('lockfabric.mcs.cut_attempts', attempts);
      this.nodes[index] = { kind: 'free' };
    } catch (error) {
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  private pointer(index: number): bigint {
    return withGeneration(encodePointer({ node: this.ports.self.node, client: this.ports.self.client, index }), this.generations[index] ?? 0);
  }
}

/** A release CAS whose outcome a read-back could not decide (see `leaveTail`). */
const UNCERTAIN = Symbol('uncertain');
/** Read-back pacing after a lost completion: 1 µs doubling to 0.5 ms, at most 200 verbs. */
const READ_BACK_FIRST_WAIT_NS = 1_000;
const READ_BACK_MAX_WAIT_NS = 500_000;
const READ_BACK_ATTEMPTS = 200;

function u64Of(bytes: Uint8Array): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}

function u64Bytes(value: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, value, true);
  return bytes;
}

export const mcs: ProtocolDefinition = {
  id: 'mcs',
  // A dead successor that never linked is cut by the releaser after releaseLinkTimeoutNs.
  recovery: { compute: { mechanism: 'driven', driver: 'queue-lock', action: 'coordinator gates every survivor (no new enqueues), waits until no survivor holds (a hand-over to the dead node counts as done), has each survivor abort its waiters (LockAbortedError), zeroes the lock table through one survivor, resumes — over ctl.queue.<node>.<verb>; a dead successor that never linked is cut by the releaser after releaseLinkTimeoutNs' } },
  // Live: wait up to 200 ms for a successor's link before cutting the queue, so a slow but live one is not cut.
  liveDefaults: { releaseLinkTimeoutNs: 200_000_000 },
  // A dead node's holders and waiters are repaired by the coordinator's queue-lock recovery.
  swarm: { nodeKill: true, pauses: 'beyond-lease', memoryRestart: true, partitions: true },
  summary: 'RDMA MCS queue lock: fetch-and-store on the tail, WRITE handover into queue nodes in descriptor slots (mutex: shared acquires are held exclusively)',
  fabric: 'verbs',
  capabilities: ['masked-atomics', 'local-cpu-access'],
  entryBytes: ENTRY_BYTES,
  modes: ['shared', 'exclusive'],
  options: MCS_OPTION_HELP,
  // Taking part in the queue-lock recovery is this definition's choice: its clients get the group.
  createClient: (ports, options) => new McsClient(ports, readMcsOptions(options), queueRecoveryGroup(ports.locks, ports.self.node)),
};
