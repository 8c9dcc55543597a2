import { LOCK_ATTR, SERVICE_CLIENT } from '@lockfabric/locks-common';
import { NS_PER_MS, clientKey } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts, LockId, NodeId } from '@lockfabric/ports';
import type { AckCollector, CnSignals, Membership } from './cn-signals.js';
import { clusterViewOf } from './cluster-view.js';
import type { ClusterView } from './cluster-view.js';
import { EMPTY_ENTRY_WORD, entryToBytes } from './entry.js';
import { sub64 } from './header.js';
import type { HeaderLayout } from './header.js';
import { resetMessage, tableTag } from './messages.js';
import type { CqlOptions } from './options.js';
import { QueueSnapshot } from './queue-snapshot.js';
import type { CqlTable } from './table-layout.js';
import { FabricVerbs } from './fabric-verbs.js';

export type ResetReason = 'queue-overflow' | 'version-wrap' | 'acquire-timeout' | 'entry-overwritten' | 'refetch-limit' | 'resetter-failed' | 'local-timeout';
/** `done`: this client reset the lock; `other`: another reset is under way; `stale`: the epoch already moved on. */
export type ResetOutcome = 'done' | 'other' | 'stale';

/** What a reset is asked to do on behalf of its caller. */
export interface ResetRequest {
  readonly lock: LockId;
  /** The header as the caller last saw it (its own membership included). */
  readonly guess: bigint;
  /** The epoch the caller works in: a reset of any other epoch is not the caller's business. */
  readonly epoch: number;
  readonly reason: ResetReason;
  /**
   * The caller's own queue membership, if it is a member (an acquirer), with its ACQ delta: it is
   * always given back, by the claiming CAS or by a withdrawal FAA, and then ended.
   */
  readonly member?: { readonly delta: bigint; readonly membership: Membership };
}

const CLAIM_ATTEMPTS_BEFORE_BACKOFF = 4;
const CLAIM_BACKOFF_FIRST_NS = 1_000;
const CLAIM_BACKOFF_MAX_NS = 64_000;
const DRAIN_POLL_FIRST_NS = 1_000;
const DRAIN_POLL_MAX_NS = 64_000;
/** A RESET or RESET_ACK may be lost (mailboxes drop silently): the unacknowledged nodes hear it again. */
const RESEND_FIRST_NS = 200_000;
const RESEND_MAX_NS = 20 * NS_PER_MS;

/**
 * The three-step lock reset (paper §4.4), with the acknowledgements counted on the memory node:
 *
 * 1. CAS the resetting CN's id into the header (and, for an acquirer, take its own queue
 *    membership out in the same CAS). Losers give up: only one client runs steps 2–3 — unless the
 *    id in the header names a compute node the coordinator declared dead; then the CAS replaces
 *    it and this client redoes the dead resetter's reset (§3.6).
 * 2. Tell the queue: RESET {lock, next epoch} to every client with a valid entry, to every known
 *    client, and to the node service of every live compute node; raise this CN's reset counter.
 *    Every member then leaves the queue with its last FAA — a holder's release, a waiter's
 *    withdrawal (ACQ subtracted) — so `qsize = wcnt = 0` in the header means every member has
 *    acknowledged, and its verbs on the lock have completed (each waits for its own entry WRITE
 *    before it withdraws). Stray acquirers that hit the reset withdraw at once.
 * 3. WRITE every entry back to version 0xFFFF, then CAS the header from the drained value to the
 *    start of the next epoch. A failed CAS means a stray FAA landed: drain again.
 *
 * A member on a dead compute node never leaves, so the header never drains. For that, each live
 * compute node's service answers the RESET with a RESET_ACK once none of its clients is a member
 * and its gate keeps them off the header until the reset is over (CnSignals). When every compute
 * node of the run has acknowledged or been declared dead by the coordinator, what is left in the
 * header belongs to dead nodes, which the memory nodes fence on the same notice: Step 3 then runs
 * from the header as it is. `suspectAfterNs` remains as a stand-in for runs without a coordinator.
 */
export class LockResetter {
  readonly resetId: number;
  /** Resets this client claimed (and so carried out). */
  resetsDone = 0;
  /** Of those, resets whose resetter had died (taken over). */
  takeovers = 0;
  /** Resets finished from the acknowledgements with dead nodes' members still in the header. */
  finishedPastDeadNodes = 0;

  constructor(
    private readonly ports: ClientPorts,
    private readonly header: HeaderLayout,
    private readonly table: CqlTable,
    private readonly signals: CnSignals,
    private readonly options: CqlOptions,
    private readonly protocol: string,
    /** Known clients of every compute node (the process's view): the broadcast of Step 2. */
    private readonly peers: () => readonly ClientAddress[] = () => [],
  ) {
    this.resetId = ports.self.node + 1;
  }

  /** The run's compute nodes and failures, when this process runs the declock node service. */
  private view(): ClusterView | undefined {
    return clusterViewOf(this.ports.locks, this.protocol);
  }

  /** True when a header's reset id names a compute node the coordinator declared dead. */
  /** The incarnation of `lock`'s memory node this client's verbs are pinned to (0 where tables never restart). */
  incarnationOf(lock: LockId): number {
    if (this.options.mutantNoTableReset) return 0;
    return this.ports.tables?.incarnations?.().get(this.table.header(lock).node) ?? 0;
  }

  resetterDead(resetId: number): boolean {
    return resetId !== 0 && resetId !== this.resetId && (this.view()?.isDead(resetId - 1) ?? false);
  }

  /** Tries to reset `lock` (see the class comment); the caller's membership is over when this resolves. */
  async reset(request: ResetRequest): Promise<ResetOutcome> {
    const { lock, epoch, reason, member } = request;
    const membership = member?.delta ?? 0n;
    const verbs = new FabricVerbs(this.ports.verbs, lock);
    const addr = this.table.header(lock);
    const span = this.ports.trace.startSpan('lock.reset', {
      attributes: { [LOCK_ATTR.protocol]: this.protocol, [LOCK_ATTR.lock]: lock, [LOCK_ATTR.client]: clientKey(this.ports.self), 'declock.reset.reason': reason },
    });
    const finish = (outcome: ResetOutcome): ResetOutcome => {
      span.setAttribute(LOCK_ATTR.outcome, outcome);
      span.end();
      return outcome;
    };

    try {
      let current = request.guess;
      let claimed: bigint | undefined;
      let tookOver = false;
      for (let attempt = 0; claimed === undefined; attempt++) {
        const seen = this.header.decode(current);
        // A completed reset already removed every member of the old epoch, including the caller.
        if (seen.epoch !== epoch) return finish('stale');
        if (seen.resetId !== 0 && !this.resetterDead(seen.resetId)) {
          // Withdrawing is safe only while a reset holds the header: positions are not handed out.
          if (membership !== 0n) await verbs.faa(addr, sub64(0n, membership));
          return finish('other');
        }
        const swap = this.header.withResetId(sub64(current, membership), this.resetId);
        const got = await verbs.cas(addr, current, swap);
        if (got === current) {
          claimed = swap;
          tookOver = seen.resetId !== 0;
        } else if (attempt < CLAIM_ATTEMPTS_BEFORE_BACKOFF) {
          current = got;
        } else {
          // The header keeps moving: let it settle, then look again. Giving up is not an option for
          // a member (taking its ACQ back outside a reset would shift every later position).
          const boundNs = Math.min(CLAIM_BACKOFF_MAX_NS, CLAIM_BACKOFF_FIRST_NS * 2 ** (attempt - CLAIM_ATTEMPTS_BEFORE_BACKOFF));
          await this.ports.clock.sleep(Math.floor(this.ports.random.next() * boundNs));
          current = await verbs.readWord(addr);
        }
      }
      // The claim took the caller's membership out: its node may acknowledge without it.
      member?.membership.leave();

      const nextEpoch = this.header.nextEpoch(epoch);
      this.resetsDone++;
      // Timed from the claim to the reinitialised header (DecLock Fig. 16 left), by whoever runs the protocol.
      this.ports.phases?.resetBegin(lock);
      if (tookOver) {
        this.takeovers++;
        span.setAttribute('declock.reset.took_over', true);
      }
      this.signals.announce(lock, nextEpoch);
      const acks = this.signals.collectAcks(lock, nextEpoch, tableTag(this.incarnationOf(lock)));
      try {
        const services = await this.notifyQueue(verbs, lock, claimed, nextEpoch);
        await this.drainAndReinitialise(verbs, lock, claimed, nextEpoch, acks, services);
      } finally {
        this.signals.stopCollecting(acks);
      }
      this.signals.observeHeader(lock, nextEpoch, 0);
      this.ports.phases?.resetEnd(lock, 'done');
      return finish('done');
    } finally {
      member?.membership.leave();
    }
  }

  /**
   * Step 2: RESET to every known client and to every client with a valid entry in the claimed
   * queue (which covers waiters of nodes this process does not know). Holders that were granted
   * at once have no entry; the broadcast is what stops their node's local handoffs (§7.17). With
   * a cluster view, also to every live compute node's service, which acknowledges. Returns those
   * service addresses (to resend to).
   */
  private async notifyQueue(verbs: FabricVerbs, lock: LockId, claimed: bigint, nextEpoch: number): Promise<Map<NodeId, ClientAddress>> {
    const { qhead, qsize } = this.header.decode(claimed);
    const snapshot = new QueueSnapshot(this.header, await verbs.read(this.table.queue(lock), this.table.queueBytes));
    const targets = new Map<string, ClientAddress>();
    // One position past qsize: the caller's own membership was already taken out of the count.
    for (let pos = qhead; pos <= qhead + qsize; pos++) {
      if (this.header.lap(pos) >= 0xffff || snapshot.state(pos) !== 'valid') continue;
      const { client } = snapshot.entry(pos);
      if (client.node === this.ports.self.node && client.client === this.ports.self.client) continue;
      targets.set(clientKey(client), client);
    }
    for (const client of this.peers()) {
      if (client.node !== this.ports.self.node || client.client !== this.ports.self.client) targets.set(clientKey(client), client);
    }
    const services = new Map<NodeId, ClientAddress>();
    for (const node of this.view()?.live() ?? []) services.set(node, { node, client: SERVICE_CLIENT });
    for (const to of [...targets.values(), ...services.values()]) this.ports.mailbox.send(resetMessage(to, lock, nextEpoch, this.resetId, this.incarnationOf(lock)));
    return services;
  }

  /**
   * Acknowledgement mode: this process knows every compute node that can hold members (the
   * service's view covers every node with clients here) and at least one of them is dead.
   */
  private finishedByAcks(acks: AckCollector): boolean {
    const view = this.view();
    if (!view || view.dead.size === 0) return false;
    if (this.options.mutantIgnoreResetAcks) return true;
    for (const client of this.peers()) if (!view.computeNodes.has(client.node)) return false;
    for (const node of view.computeNodes) if (!view.isDead(node) && !acks.nodes.has(node)) return false;
    return true;
  }

  /** Waits for the acknowledgements (the drain, or RESET_ACKs past dead nodes), then Step 3. */
  private async drainAndReinitialise(
    verbs: FabricVerbs,
    lock: LockId,
    claimed: bigint,
    nextEpoch: number,
    acks: AckCollector,
    services: ReadonlyMap<NodeId, ClientAddress>,
  ): Promise<void> {
    const { clock } = this.ports;
    const addr = this.table.header(lock);
    const suspectNs = this.options.suspectAfterNs;
    const emptyQueue = new Uint8Array(this.table.queueBytes);
    for (let slot = 0; slot < this.header.capacity; slot++) emptyQueue.set(entryToBytes(EMPTY_ENTRY_WORD), slot * 8);
    let word = claimed;
    let changedAtNs = clock.nowNs();
    let pollNs = DRAIN_POLL_FIRST_NS;
    let resendNs = RESEND_FIRST_NS;
    let resendAtNs = clock.nowNs() + resendNs;
    for (;;) {
      const seen = this.header.decode(word);
      const drained = seen.qsize === 0 && seen.wcnt === 0;
      const pastDead = !drained && this.finishedByAcks(acks);
      // Every live node acknowledged after its members left: take the header as it is now, the
      // rest is dead nodes' membership (re-read: the acks came after their last verbs completed).
      if (pastDead) word = await verbs.readWord(addr);
      // Members that neither release nor withdraw for suspectAfterNs are declared failed.
      if (drained || pastDead || clock.nowNs() - changedAtNs >= suspectNs) {
        await verbs.write(this.table.queue(lock), emptyQueue);
        const got = await verbs.cas(addr, word, this.header.epochStart(nextEpoch));
        if (got === word) {
          if (pastDead) this.finishedPastDeadNodes++;
          return;
        }
        word = got;
        changedAtNs = clock.nowNs();
        continue;
      }
      if (services.size > 0 && clock.nowNs() >= resendAtNs) {
        const view = this.view();
        for (const [node, to] of services) if (!acks.nodes.has(node) && !view?.isDead(node)) this.ports.mailbox.send(resetMessage(to, lock, nextEpoch, this.resetId, this.incarnationOf(lock)));
        resendNs = Math.min(RESEND_MAX_NS, resendNs * 2);
        resendAtNs = clock.nowNs() + resendNs;
      }
      await clock.sleep(pollNs);
      pollNs = Math.min(DRAIN_POLL_MAX_NS, pollNs * 2);
      const latest = await verbs.readWord(addr);
      if (latest !== word) {
        word = latest;
        changedAtNs = clock.nowNs();
      }
    }
  }
}
