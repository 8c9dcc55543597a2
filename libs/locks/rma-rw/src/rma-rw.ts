import { AcquireDeadline, AcquireSpan, LOCK_ATTR, OptionReader, queueRecoveryGroup } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { DEFAULT_RELEASE_LINK_TIMEOUT_NS, McsClient, NEXT_OFFSET, fieldAddr, readMcsOptions } from '@lockfabric/lock-mcs';
import type { McsGrant } from '@lockfabric/lock-mcs';
import { clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, RemoteAddr } from '@lockfabric/ports';
import { COUNTERS_OFFSET, ENTRY_BYTES, FLAG, MINUS_ONE, ONE_DEPART, PHASE_OFFSET, afterReset, decodeCounters, readersInside } from './counters.js';

export interface RmaRwOptions {
  /** Readers granted per batch before they wait for a writer phase or a reset (A25: 4000). */
  readonly readerThreshold: number;
  /** Consecutive writers handed the lock in one writer phase (A25: 16). */
  readonly writerThreshold: number;
  /** Pause between two READs of the counters while waiting. */
  readonly pollIntervalNs: number;
  /** Passed to the writers' MCS queue (libs/locks/mcs). */
  readonly releaseLinkTimeoutNs: number;
  /** Test-only mutant: a writer raises the flag and holds without waiting for readers inside to leave. */
  readonly mutantSkipDrain: boolean;
  /** Test-only mutant: any word in the queue node's `next` counts as a linked successor, stale links too. */
  readonly mutantRawSuccessorCheck: boolean;
  /** Passed to the writers' MCS queue: a failed enqueue swap's node is reused under the same link generation. */
  readonly mutantReuseAfterFailedSwap: boolean;
  /**
   * Test-only mutant: the writers' MCS queue joins the node's queue-recovery group, as every MCS
   * client did before protocols opted in, so the coordinator's queue-lock recovery gates, aborts
   * and resets RMA-RW, whose rule is `none` (its reader counters are not part of that recovery).
   */
  readonly mutantJoinQueueRecovery: boolean;
}

export const RMA_RW_OPTION_HELP = {
  readerThreshold: 'readers granted per batch before new readers wait for a writer phase or a reset (default 4000)',
  writerThreshold: 'consecutive writers handed the lock in one writer phase before it goes back to readers (default 16)',
  pollIntervalNs: 'ns between two READs of the counters while waiting (default 500)',
  releaseLinkTimeoutNs: `the writers' MCS queue: ns a release waits for an enqueued successor to link in (default ${DEFAULT_RELEASE_LINK_TIMEOUT_NS})`,
  mutantSkipDrain: 'test-only: writers hold without waiting for readers to leave (broken on purpose)',
  mutantRawSuccessorCheck: 'test-only: a stale link in the queue node counts as a successor, so the phase stays open (broken on purpose)',
  mutantReuseAfterFailedSwap: "test-only: the writers' MCS queue reuses a node whose enqueue swap failed as it was (broken on purpose)",
  mutantJoinQueueRecovery: "test-only: the writers' MCS queue takes part in the coordinator's queue-lock recovery (broken on purpose)",
};

export function readRmaRwOptions(options?: ProtocolOptions): RmaRwOptions {
  const reader = new OptionReader('rma-rw', options);
  const parsed: RmaRwOptions = {
    readerThreshold: reader.number('readerThreshold', 4000, { min: 1, max: 2 ** 30, integer: true }),
    writerThreshold: reader.number('writerThreshold', 16, { min: 1, integer: true }),
    pollIntervalNs: reader.number('pollIntervalNs', 500, { min: 1 }),
    releaseLinkTimeoutNs: reader.number('releaseLinkTimeoutNs', DEFAULT_RELEASE_LINK_TIMEOUT_NS, { min: 1 }),
    mutantSkipDrain: reader.boolean('mutantSkipDrain', false),
    mutantRawSuccessorCheck: reader.boolean('mutantRawSuccessorCheck', false),
    mutantReuseAfterFailedSwap: reader.boolean('mutantReuseAfterFailedSwap', false),
    mutantJoinQueueRecovery: reader.boolean('mutantJoinQueueRecovery', false),
  };
  reader.done();
  return parsed;
}

interface RmaRwGrant extends Grant {
  readonly addr: RemoteAddr;
  readonly heldAs: LockMode;
  /** Writers: the MCS queue grant and this writer's place in the writer phase (1 = opened it). */
  readonly writer?: { readonly queue: McsGrant; readonly position: number };
}

/**
 * RMA-RW (Schmid et al., HPDC'16) as ShiftLock §4.1 runs it: writers queue in an MCS lock (reused
 * from libs/locks/mcs) and readers count themselves in a counters word beside it.
 *
 * Reader: FAA arrive+1; granted if the old value shows no writer flag and fewer than
 * `readerThreshold` arrivals, else FAA −1 and poll (READ) until that changes. Release: FAA depart+1.
 * Writer: MCS acquire, READ the phase and counters; if no writer phase is open, wait until no
 * reader is inside, FAA the flag, and wait for readers that slipped in to leave. Release: hand over
 * within the phase (WRITE the phase length, MCS handover) while a successor is linked and fewer than
 * `writerThreshold` writers held in a row; otherwise close the phase first (READ, then CAS the
 * counters back to a fresh batch) — the lock-mode maintenance ShiftLock blames for RMA-RW's cost.
 * Writers wait for every reader inside, and new readers get in until a writer raises the flag:
 * the lock prefers readers.
 */
export class RmaRwClient implements LockClient<RmaRwGrant> {
  private readonly queue: McsClient;
  private readonly key: string;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: RmaRwOptions,
  ) {
    this.queue = new McsClient(
      ports,
      readMcsOptions({ pollIntervalNs: options.pollIntervalNs, releaseLinkTimeoutNs: options.releaseLinkTimeoutNs, mutantReuseAfterFailedSwap: options.mutantReuseAfterFailedSwap }),
      // No queue-recovery group: RMA-RW does not take part in the queue-lock recovery (rule `none`).
      options.mutantJoinQueueRecovery ? queueRecoveryGroup(ports.locks, ports.self.node) : undefined,
    );
    this.key = clientKey(ports.self);
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<RmaRwGrant> {
    const addr = lockAddress(this.ports.locks, lock);
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'rma-rw', lock, mode, this.key);
    try {
      deadline.check();
      const grant = mode === 'shared' ? await this.takeShared(addr, lock, deadline, op) : await this.takeExclusive(addr, lock, deadline, op, options);
      op.granted();
      return grant;
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  async release(grant: RmaRwGrant): Promise<void> {
    const span = this.ports.trace.startSpan('lock.release', {
      attributes: { [LOCK_ATTR.protocol]: 'rma-rw', [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: this.key },
    });
    try {
      // A writer's mode maintenance (phase WRITE or closing CAS) is timed as its release atomic; the queue's handover marks its own phases.
      this.ports.phases?.enter('initial-atomic');
      if (!grant.writer) await this.ports.verbs.faa(counters(grant.addr), ONE_DEPART, { lock: grant.lock });
      else await this.releaseExclusive(grant.addr, grant.lock, grant.writer.queue, grant.writer.position);
    } catch (error) {
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  private async takeShared(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<RmaRwGrant> {
    const { verbs } = this.ports;
    for (let attempt = 0; ; attempt++) {
      this.ports.phases?.enter(attempt === 0 ? 'initial-atomic' : 'retries');
      op.verbs++;
      const seen = decodeCounters(await verbs.faa(counters(addr), 1n, { lock }));
      if (!seen.flag && seen.arrive < BigInt(this.options.readerThreshold)) return { lock, mode: 'shared', addr, heldAs: 'shared' };
      // A writer phase is open or the batch is full: take the arrival back, wait, try again.
      op.verbs++;
      await verbs.faa(counters(addr), MINUS_ONE, { lock });
      this.ports.phases?.enter('wait-writers');
      await this.waitForReaderTurn(addr, lock, deadline, op);
    }
  }

  /** Polls until a reader may arrive; closes a full batch whose readers all left (nobody else would). */
  private async waitForReaderTurn(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    const threshold = BigInt(this.options.readerThreshold);
    for (;;) {
      op.retries++;
      await deadline.pause(this.options.pollIntervalNs);
      op.verbs++;
      const word = await this.readCounters(addr, lock);
      const seen = decodeCounters(word);
      if (seen.flag) continue;
      if (seen.arrive < threshold) return;
      if (seen.depart >= threshold) {
        op.verbs++;
        await this.ports.verbs.cas(counters(addr), word, afterReset(word), { lock });
        return;
      }
    }
  }

  private async takeExclusive(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan, options?: AcquireOptions): Promise<RmaRwGrant> {
    const queue = await this.queue.acquire(lock, 'exclusive', options?.timeoutMs === undefined ? options : { ...options, timeoutMs: deadline.remainingNs() / 1e6 });
    let raised = false;
    try {
      // The queue marked its own phases (initial atomic, notify and wait for the predecessor); what is left is the readers.
      this.ports.phases?.enter('wait-readers');
      op.verbs++;
      const bytes = await this.ports.verbs.read({ ...addr, offset: addr.offset + PHASE_OFFSET }, 16, { lock });
      const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
      const phase = view.getBigUint64(0, true);
      let word = view.getBigUint64(8, true);
      let position = 1;
      if (decodeCounters(word).flag) {
        position = Number(phase) + 1;
      } else {
        while (readersInside(word) !== 0n) word = await this.pollCounters(addr, lock, deadline, op);
        op.verbs++;
        word = (await this.ports.verbs.faa(counters(addr), FLAG, { lock })) + FLAG;
        raised = true;
      }
      if (!this.options.mutantSkipDrain) {
        while (readersInside(word) !== 0n) word = await this.pollCounters(addr, lock, deadline, op);
      }
      return { lock, mode: 'exclusive', addr, heldAs: 'exclusive', writer: { queue, position } };
    } catch (error) {
      // Gave up while readers drained: let them back in and pass the writers' queue on.
      if (raised) await this.ports.verbs.faa(counters(addr), MINUS_ONE - FLAG + 1n, { lock });
      await this.queue.release(queue);
      throw error;
    }
  }

  private async releaseExclusive(addr: RemoteAddr, lock: LockId, queue: McsGrant, position: number): Promise<void> {
    const { verbs, descriptors } = this.ports;
    // Only a link of the node's current generation is a successor: a stale one (a waiter the queue
    // was cut after, or one that linked behind a lost enqueue) never gets this hand-over.
    const successorLinked = this.options.mutantRawSuccessorCheck
      ? (await verbs.cpu.load(fieldAddr(descriptors.self, queue.queueNode, NEXT_OFFSET))) !== 0n
      : await this.queue.successorLinked(queue);
    if (successorLinked && position < this.options.writerThreshold) {
      // Stay in the writer phase: the successor finds the flag up and the phase one longer.
      const bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setBigUint64(0, BigInt(position), true);
      await verbs.write({ ...addr, offset: addr.offset + PHASE_OFFSET }, bytes, { lock });
    } else {
      // Close the phase: READ the counters, then CAS them to a fresh batch without the flag.
      let word = await this.readCounters(addr, lock);
      for (;;) {
        const seen = await verbs.cas(counters(addr), word, afterReset(word), { lock });
        if (seen === word) break;
        word = seen;
      }
    }
    await this.queue.release(queue);
  }

  private async pollCounters(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<bigint> {
    op.retries++;
    await deadline.pause(this.options.pollIntervalNs);
    op.verbs++;
    return this.readCounters(addr, lock);
  }

  private async readCounters(addr: RemoteAddr, lock: LockId): Promise<bigint> {
    const bytes = await this.ports.verbs.read(counters(addr), 8, { lock });
    return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  }
}

function counters(addr: RemoteAddr): RemoteAddr {
  return { ...addr, offset: addr.offset + COUNTERS_OFFSET };
}

export const rmaRw: ProtocolDefinition = {
  id: 'rma-rw',
  // No lease and no repair (README, "Failures").
  recovery: { compute: { mechanism: 'none', action: 'a dead writer keeps the MCS queue and the writer flag, a dead reader its arrival; locks stay held until a reset between runs' } },
  // Live: a 200 ms successor-link wait (as MCS) and reader polls near one live round trip.
  liveDefaults: { releaseLinkTimeoutNs: 200_000_000, pollIntervalNs: 50_000 },
  // No lease and no repair: a crashed holder (writer or reader) keeps the lock (README "Failures").
  swarm: { pauses: 'beyond-lease', memoryRestart: true, partitions: true },
  summary: 'RMA-RW: MCS queue for writers plus reader counters, read-preferring, writer phases of up to 16 handovers',
  fabric: 'verbs',
  capabilities: ['masked-atomics', 'local-cpu-access'],
  entryBytes: ENTRY_BYTES,
  modes: ['shared', 'exclusive'],
  options: RMA_RW_OPTION_HELP,
  createClient: (ports, options) => new RmaRwClient(ports, readRmaRwOptions(options)),
};
