import { LOCK_ATTR } from '@lockfabric/locks-common';
import { FabricAccessError, clientKey } from '@lockfabric/ports';
import type { ClientPorts, LockId, Message, RemoteAddr, Span } from '@lockfabric/ports';
import { eraAddress } from './era.js';
import { ENTRY_MASK, RELCNT_MASK, RELCNT_SHIFT, addU64, decodeEntry, leap, resetValue, u64FromBytes } from './lock-entry.js';
import { MessageType, decodeMessage, encodeMessage } from './messages.js';
import type { ShiftLockMessage } from './messages.js';
import type { ShiftLockOptions } from './options.js';
import type { Patience } from './patience.js';
import type { RelCntWatch } from './relcnt-watch.js';

/** What a stalled waiter learns from trying to recover. */
export type RecoveryOutcome =
  /** The lock was reset (by this waiter or another): restart the acquisition from scratch. */
  | 'reset'
  /** RelCnt moved after all: the waiter's FAA/enqueue is still live; keep waiting with a fresh window. */
  | 'progress';

export interface RecoveryStats {
  /** Recovery requests sent (server) or era CAS attempts (one-sided). */
  attempts: number;
  /** Requests that reset the lock. */
  accepted: number;
}

/**
 * The client side of ShiftLock's failure handling (spec §4.2–4.3): a waiter whose RelCntWatch says
 * "stalled" asks for a reset fenced by the era and by the RelCnt it saw, and learns whether to restart.
 *
 * The era is read in the same doorbell as the RelCnt READ that confirms the stall. That is as strong
 * as reading it when the window began (A9): a reset inside the window would have moved RelCnt by
 * 2^63, and the request also carries the RelCnt, which the reset compares.
 */
export class Recoverer {
  readonly stats: RecoveryStats = { attempts: 0, accepted: 0 };
  private requestSeq = 0;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: ShiftLockOptions,
  ) {}

  private get leaseNs(): number {
    return this.options.leaseNs * (1 + this.options.clockDrift);
  }

  eraAddress(entry: RemoteAddr): RemoteAddr {
    return eraAddress(this.ports.descriptors, this.options.recoveryClient, entry, this.ports.locks.entryBytes, this.options.eraBuckets);
  }

  /**
   * Called when `watch` reports a stall on the lock at `entry`. `patience` is the acquire's: the
   * recovery does not stop for the caller's deadline, but the caller learns of it on time.
   */
  async onStall(lock: LockId, entry: RemoteAddr, watch: RelCntWatch, patience: Patience): Promise<RecoveryOutcome> {
    const clock = this.ports.clock;
    if (this.options.recovery === 'off') {
      watch.restart(clock.nowNs());
      return 'progress';
    }
    let observed = watch.last;
    let { relCnt, era } = await this.snapshot(lock, entry);
    for (;;) {
      if (leap(observed, relCnt)) return 'reset';
      if (relCnt !== observed) {
        watch.observe(relCnt, clock.nowNs());
        return 'progress';
      }
      if (await this.request(lock, entry, relCnt, era, patience)) return 'reset';
      // Rejected: someone else is recovering, or the era moved. Wait a lease and look again.
      const endNs = clock.nowNs() + this.leaseNs;
      while (clock.nowNs() < endNs) await patience.sleep(endNs - clock.nowNs());
      observed = relCnt;
      ({ relCnt, era } = await this.snapshot(lock, entry));
    }
  }

  /** RelCnt and the lock's era, read in one doorbell (RelCnt first). */
  async snapshot(lock: LockId, entry: RemoteAddr): Promise<{ relCnt: bigint; era: bigint }> {
    const [rel, era] = await this.ports.verbs.post([
      { op: 'read', addr: { ...entry, offset: entry.offset + 8 }, length: 8, lock },
      { op: 'read', addr: this.eraAddress(entry), length: 8, lock },
    ]);
    if (rel?.status !== 'ok' || !rel.data) throw new FabricAccessError(rel?.status ?? 'unreachable', rel?.detail ?? 'RelCnt read failed');
    if (era?.status !== 'ok' || !era.data) throw new FabricAccessError(era?.status ?? 'unreachable', era?.detail ?? 'era read failed');
    return { relCnt: u64FromBytes(rel.data), era: u64FromBytes(era.data) };
  }

  private async request(lock: LockId, entry: RemoteAddr, relCnt: bigint, era: bigint, patience: Patience): Promise<boolean> {
    this.stats.attempts++;
    const span = this.ports.trace.startSpan('lock.reset', {
      attributes: {
        [LOCK_ATTR.protocol]: 'shiftlock',
        [LOCK_ATTR.lock]: lock,
        [LOCK_ATTR.client]: clientKey(this.ports.self),
        'lockfabric.shiftlock.recovery': this.options.recovery,
        'lockfabric.shiftlock.era': era.toString(),
      },
    });
    try {
      const accepted = this.options.recovery === 'one-sided' ? await this.resetOneSided(lock, entry, relCnt, era) : await this.askServer(lock, entry, relCnt, era, span, patience);
      if (accepted) this.stats.accepted++;
      span.setAttribute(LOCK_ATTR.outcome, accepted ? 'ok' : 'rejected');
      return accepted;
    } catch (error) {
      span.recordError(error);
      span.setAttribute(LOCK_ATTR.outcome, 'error');
      throw error;
    } finally {
      span.end();
    }
  }

  /** The recovery RPC (spec §4.3) to the server on the lock's memory node, over the Mailbox. */
  private async askServer(lock: LockId, entry: RemoteAddr, relCnt: bigint, era: bigint, span: Span, patience: Patience): Promise<boolean> {
    const { mailbox, clock } = this.ports;
    const isReply = (m: ShiftLockMessage | undefined): boolean => m?.type === MessageType.recoverReply;
    // Late replies to earlier requests (after their wait timed out) are dropped here.
    while (await mailbox.receive((m) => isReply(decodeMessage(m)), { deadlineNs: clock.nowNs() })) {
      // drained
    }
    this.requestSeq = (this.requestSeq + 1) >>> 0;
    const id = this.requestSeq;
    mailbox.send(
      encodeMessage({
        type: MessageType.recover,
        to: { node: entry.node, client: this.options.recoveryClient },
        lock,
        value: relCnt,
        epoch: era,
        count: id,
        ...(span.context ? { trace: span.context } : {}),
      }),
    );
    const matches = (m: Message): boolean => {
      const decoded = decodeMessage(m);
      return decoded !== undefined && isReply(decoded) && decoded.lock === lock && decoded.count === id;
    };
    // No answer within a lease (no server running, or it is down) counts as a rejection.
    const endNs = clock.nowNs() + this.leaseNs;
    for (;;) {
      const signal = patience.waitSignal;
      const reply = await mailbox.receive(matches, { deadlineNs: patience.wakeBy(endNs), ...(signal ? { signal } : {}) });
      patience.check();
      if (reply) return reply.value === 1n;
      if (clock.nowNs() >= endNs) return false;
    }
  }

  /**
   * Reset without the server CPU: CAS the era forward, then ExtCAS the entry comparing RelCnt. Unlike
   * the server's handler these are two atomics; a recoverer paused between them can only do harm if
   * RelCnt comes back to exactly the value it saw, which takes two more resets with no release
   * between them (≥ 6·T_lease of pause). The server mode has no such window.
   */
  private async resetOneSided(lock: LockId, entry: RemoteAddr, relCnt: bigint, era: bigint): Promise<boolean> {
    const { verbs } = this.ports;
    const seen = await verbs.cas(this.eraAddress(entry), era, addU64(era, 1n), { lock });
    if (seen !== era) return false;
    const old = await verbs.maskedCas(entry, 16, relCnt << RELCNT_SHIFT, resetValue(relCnt), RELCNT_MASK, ENTRY_MASK, { lock });
    return decodeEntry(old).relCnt === relCnt;
  }
}
