import { LOCK_ATTR } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { clientKey, lockAddress } from '@lockfabric/ports';
import type { ClientPorts, LockId, SpanContextRef } from '@lockfabric/ports';
import { eraAddress } from './era.js';
import { ENTRY_MASK, RELCNT_MASK, RELCNT_SHIFT, addU64, decodeEntry, resetValue } from './lock-entry.js';
import { MessageType, decodeMessage, encodeMessage } from './messages.js';
import type { ShiftLockMessage } from './messages.js';
import { readShiftLockOptions } from './options.js';
import type { ShiftLockOptions } from './options.js';

export interface RecoveryRequest {
  readonly lock: LockId;
  readonly era: bigint;
  readonly relCnt: bigint;
}

export type RecoveryVerdict = 'accepted' | 'stale-era' | 'progress' | 'not-here';

export interface RecoveryServerStats {
  accepted: number;
  rejected: number;
  /** Every reset done: the lock, the era it started, and the RelCnt it leapt from. */
  readonly resets: { lock: LockId; era: bigint; relCnt: bigint }[];
}

/**
 * The memory-node side of ShiftLock recovery (spec §4.3): the only use of a memory node's CPU.
 *
 * It runs as a client with the ports of client `recoveryClient` on the memory node itself, so its
 * descriptor slot (registered, one-sided readable, on the memory node) holds the era counters and
 * the Mailbox carries the request and reply. Requests are handled one at a time, which makes
 * "check the era, bump it, reset the entry" atomic with respect to every other recovery; the reset
 * itself is one loopback 16-byte ExtCAS, atomic with the clients' atomics, that also compares RelCnt.
 *
 * Someone must start it on every memory node (`serve`): the memory-node service or the test harness.
 */
export class ShiftLockRecoveryServer {
  readonly stats: RecoveryServerStats = { accepted: 0, rejected: 0, resets: [] };
  private readonly options: ShiftLockOptions;

  constructor(
    private readonly ports: ClientPorts,
    options?: ProtocolOptions,
  ) {
    this.options = readShiftLockOptions(options);
    if (ports.self.client !== this.options.recoveryClient) {
      throw new RangeError(`the ShiftLock recovery server must run as client ${this.options.recoveryClient}, not ${ports.self.client}`);
    }
  }

  /** Serves requests until `signal` aborts. */
  async serve(signal?: AbortSignal): Promise<void> {
    const isRequest = (m: ShiftLockMessage | undefined): m is ShiftLockMessage => m?.type === MessageType.recover;
    for (;;) {
      if (signal?.aborted) return;
      const message = await this.ports.mailbox.receive((m) => isRequest(decodeMessage(m)), signal ? { signal } : {});
      const request = message ? decodeMessage(message) : undefined;
      if (!request) return;
      const verdict = await this.handle({ lock: request.lock, era: request.epoch, relCnt: request.value }, request.trace);
      this.ports.mailbox.send(
        encodeMessage({
          type: MessageType.recoverReply,
          to: request.from,
          lock: request.lock,
          value: verdict === 'accepted' ? 1n : 0n,
          epoch: request.epoch,
          count: request.count,
        }),
      );
    }
  }

  /** ON Recover{lock, era, rel}: reject a stale era or a lock that made progress; else bump the era and reset. */
  async handle(request: RecoveryRequest, parent?: SpanContextRef): Promise<RecoveryVerdict> {
    const entry = lockAddress(this.ports.locks, request.lock);
    const span = this.ports.trace.startSpan('lock.reset', {
      ...(parent ? { parent } : {}),
      attributes: {
        [LOCK_ATTR.protocol]: 'shiftlock',
        [LOCK_ATTR.lock]: request.lock,
        [LOCK_ATTR.client]: clientKey(this.ports.self),
        'lockfabric.shiftlock.era': request.era.toString(),
      },
    });
    try {
      const verdict = await this.decide(request, entry);
      if (verdict === 'accepted') this.stats.accepted++;
      else this.stats.rejected++;
      span.setAttribute(LOCK_ATTR.outcome, verdict);
      return verdict;
    } finally {
      span.end();
    }
  }

  private async decide(request: RecoveryRequest, entry: ReturnType<typeof lockAddress>): Promise<RecoveryVerdict> {
    if (entry.node !== this.ports.self.node) return 'not-here';
    const { verbs } = this.ports;
    const eraAddr = eraAddress(this.ports.descriptors, this.options.recoveryClient, entry, this.ports.locks.entryBytes, this.options.eraBuckets);
    // Only this server writes eras, one request at a time, so plain CPU load and store suffice.
    const era = await verbs.cpu.load(eraAddr);
    if (era !== request.era) return 'stale-era';
    await verbs.cpu.store(eraAddr, addU64(era, 1n));
    const old = await verbs.maskedCas(entry, 16, request.relCnt << RELCNT_SHIFT, resetValue(request.relCnt), RELCNT_MASK, ENTRY_MASK, { lock: request.lock });
    if (decodeEntry(old).relCnt !== request.relCnt) return 'progress';
    this.stats.resets.push({ lock: request.lock, era: addU64(era, 1n), relCnt: request.relCnt });
    return 'accepted';
  }
}
