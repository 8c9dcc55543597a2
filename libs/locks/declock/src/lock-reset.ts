import { LOCK_ATTR } from '@lockfabric/locks-common';
import { NS_PER_MS, clientKey } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts, LockId } from '@lockfabric/ports';
import type { CnSignals } from './cn-signals.js';
import { EMPTY_ENTRY_WORD, entryToBytes } from './entry.js';
import { sub64 } from './header.js';
import type { HeaderLayout } from './header.js';
import { resetMessage } from './messages.js';
import type { CqlOptions } from './options.js';
import { QueueSnapshot } from './queue-snapshot.js';
import type { CqlTable } from './table-layout.js';
import { FabricVerbs } from './fabric-verbs.js';

export type ResetReason = 'queue-overflow' | 'version-wrap' | 'acquire-timeout' | 'entry-overwritten' | 'refetch-limit';
/** `done`: this client reset the lock; `other`: another reset is under way; `stale`: the epoch already moved on. */
export type ResetOutcome = 'done' | 'other' | 'stale';

const CLAIM_ATTEMPTS_BEFORE_BACKOFF = 4;
const CLAIM_BACKOFF_FIRST_NS = 1_000;
const CLAIM_BACKOFF_MAX_NS = 64_000;
const DRAIN_POLL_FIRST_NS = 1_000;
const DRAIN_POLL_MAX_NS = 64_000;

/**
 * The three-step lock reset (paper §4.4), with the acknowledgements counted on the memory node:
 *
 * 1. CAS the resetting CN's id into the header (and, for an acquirer, take its own queue
 *    membership out in the same CAS). Losers give up: only one client runs steps 2–3.
 * 2. Tell the queue: RESET {lock, next epoch} to every client with a valid entry, and raise this
 *    CN's reset counter. Every member then leaves the queue with its last FAA — a holder's release,
 *    a waiter's withdrawal (ACQ subtracted) — so `qsize = wcnt = 0` in the header means every
 *    member has acknowledged, and its verbs on the lock have completed (each waits for its own
 *    entry WRITE before it withdraws). Stray acquirers that hit the reset withdraw at once.
 * 3. WRITE every entry back to version 0xFFFF, then CAS the header from the drained value to the
 *    start of the next epoch. A failed CAS means a stray FAA landed: drain again.
 *
 * Counting acknowledgements on the header needs no membership list — the ports have none — and
 * the drained header proves that no verb of the old epoch is still in flight.
 */
export class LockResetter {
  readonly resetId: number;
  /** Resets this client claimed (and so carried out). */
  resetsDone = 0;

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

  /**
   * Tries to reset `lock` whose header was last seen as `guess` in `epoch`. `membership` is the
   * ACQ delta of the caller's own queue membership (0 for a releaser, which already left); it is
   * always given back, by the claiming CAS or by a withdrawal FAA.
   */
  async reset(lock: LockId, guess: bigint, membership: bigint, epoch: number, reason: ResetReason): Promise<ResetOutcome> {
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

    let current = guess;
    let claimed: bigint | undefined;
    for (let attempt = 0; claimed === undefined; attempt++) {
      const seen = this.header.decode(current);
      // A completed reset already removed every member of the old epoch, including the caller.
      if (seen.epoch !== epoch) return finish('stale');
      if (seen.resetId !== 0) {
        // Withdrawing is safe only while a reset holds the header: positions are not handed out.
        if (membership !== 0n) await verbs.faa(addr, sub64(0n, membership));
        return finish('other');
      }
      const swap = this.header.withResetId(sub64(current, membership), this.resetId);
      const got = await verbs.cas(addr, current, swap);
      if (got === current) {
        claimed = swap;
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

    const nextEpoch = this.header.nextEpoch(epoch);
    this.resetsDone++;
    this.signals.announce(lock, nextEpoch);
    await this.notifyQueue(verbs, lock, claimed, nextEpoch);
    await this.drainAndReinitialise(verbs, lock, claimed, nextEpoch);
    return finish('done');
  }

  /**
   * Step 2: RESET to every known client and to every client with a valid entry in the claimed
   * queue (which covers waiters of nodes this process does not know). Holders that were granted
   * at once have no entry; the broadcast is what stops their node's local handoffs (§7.17).
   */
  private async notifyQueue(verbs: FabricVerbs, lock: LockId, claimed: bigint, nextEpoch: number): Promise<void> {
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
    for (const to of targets.values()) this.ports.mailbox.send(resetMessage(to, lock, nextEpoch, this.resetId));
  }

  /** Waits for the acknowledgements (the drain), then Step 3. */
  private async drainAndReinitialise(verbs: FabricVerbs, lock: LockId, claimed: bigint, nextEpoch: number): Promise<void> {
    const { clock } = this.ports;
    const addr = this.table.header(lock);
    const suspectNs = this.options.suspectAfterMs * NS_PER_MS;
    const emptyQueue = new Uint8Array(this.table.queueBytes);
    for (let slot = 0; slot < this.header.capacity; slot++) emptyQueue.set(entryToBytes(EMPTY_ENTRY_WORD), slot * 8);
    let word = claimed;
    let changedAtNs = clock.nowNs();
    let pollNs = DRAIN_POLL_FIRST_NS;
    for (;;) {
      const seen = this.header.decode(word);
      const drained = seen.qsize === 0 && seen.wcnt === 0;
      // Members that neither release nor withdraw for suspectAfterMs are declared failed.
      if (drained || clock.nowNs() - changedAtNs >= suspectNs) {
        await verbs.write(this.table.queue(lock), emptyQueue);
        const got = await verbs.cas(addr, word, this.header.epochStart(nextEpoch));
        if (got === word) return;
        word = got;
        changedAtNs = clock.nowNs();
        continue;
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
