import { AcquireDeadline, AcquireSpan, LOCK_ATTR, OptionReader, isUncertain } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { LockAbortedError, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, Message, RemoteAddr } from '@lockfabric/ports';
import { MINUS_ONE, REQUEST_EXCLUSIVE, REQUEST_SHARED, RETRY, clientOfTag, countOf, pack, tagOf, tailOf } from './lock-word.js';

export interface NcosedOptions {
  /** Pause between two READs while an exclusive holder waits for granted readers to leave. */
  readonly pollIntervalNs: number;
  /** How long the request loop keeps listening after this client last queued on a lock. */
  readonly serveIdleNs: number;
  /** Test-only mutant: an exclusive requester granted by its predecessor skips the wait for readers. */
  readonly mutantSkipReaderDrain: boolean;
  /** Test-only mutant: an exclusive CAS into the tail that failed `unreachable` is not read back. */
  readonly mutantNoReadBack: boolean;
}

export const NCOSED_OPTION_HELP = {
  pollIntervalNs: 'ns between two READs while an exclusive holder waits for shared holders to leave (default 500)',
  serveIdleNs: 'ns the request loop keeps listening (answering RETRY) after the client last held or queued exclusively (default 50000000)',
  mutantSkipReaderDrain: 'test-only: a granted exclusive requester does not wait for shared holders (broken on purpose)',
  mutantNoReadBack: 'test-only: do not read the tail back after an exclusive CAS failed unreachable (leaks locks on lost completions)',
};

export function readNcosedOptions(options?: ProtocolOptions): NcosedOptions {
  const reader = new OptionReader('ncosed', options);
  const parsed: NcosedOptions = {
    pollIntervalNs: reader.number('pollIntervalNs', 500, { min: 1 }),
    serveIdleNs: reader.number('serveIdleNs', 50_000_000, { min: 1 }),
    mutantSkipReaderDrain: reader.boolean('mutantSkipReaderDrain', false),
    mutantNoReadBack: reader.boolean('mutantNoReadBack', false),
  };
  reader.done();
  return parsed;
}

interface NcosedGrant extends Grant {
  readonly addr: RemoteAddr;
  readonly heldAs: LockMode;
}

/**
 * This client's exclusive request on one lock, from its CAS into the tail until it passed the lock
 * on: the requests other clients queued on it (they saw it in the tail).
 */
interface Tenure {
  readonly readers: Message[];
  successor?: Message;
  /** Wakes a release that waits for the request of a successor that replaced it in the tail. */
  wake?: () => void;
}

/**
 * N-CoSED (Narravula et al., CCGrid'07) as DSLR §6.1 describes it; details follow the DSLR
 * reproduction notes' reconstruction (README). One word: the last exclusive requester (tail) and the
 * number of granted readers. Exclusive: CAS myself into the tail (retried with each value seen);
 * with a previous tail, SEND it a request and wait for its grant; then poll until no reader holds.
 * Shared: FAA +1; with a tail, FAA −1 and SEND the tail a request. A releasing exclusive holder
 * counts the readers queued on it in with one FAA and grants them, then grants its successor, or
 * CASes itself out of the tail. Requests reaching a client that no longer holds or queues get RETRY.
 */
export class NcosedClient implements LockClient<NcosedGrant> {
  private readonly tag: bigint;
  private readonly key: string;
  private readonly tenures = new Map<LockId, Tenure>();
  /** Request ids; the random start keeps a late reply from an earlier run (same client index, live) from matching. */
  private nextRequest: bigint;
  private serving = false;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: NcosedOptions,
  ) {
    this.tag = tagOf(ports.self);
    this.key = clientKey(ports.self);
    this.nextRequest = BigInt(ports.random.int(2 ** 30)) << 20n;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<NcosedGrant> {
    const addr = lockAddress(this.ports.locks, lock);
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'ncosed', lock, mode, this.key);
    try {
      deadline.check();
      if (mode === 'shared') await this.takeShared(addr, lock, deadline, op);
      else await this.takeExclusive(addr, lock, deadline, op);
      op.granted();
      return { lock, mode, addr, heldAs: mode };
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  async release(grant: NcosedGrant): Promise<void> {
    const span = this.ports.trace.startSpan('lock.release', {
      attributes: { [LOCK_ATTR.protocol]: 'ncosed', [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: this.key },
    });
    try {
      if (grant.heldAs === 'shared') await this.ports.verbs.faa(grant.addr, MINUS_ONE, { lock: grant.lock });
      else await this.passOn(grant.addr, grant.lock);
    } catch (error) {
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  /**
   * Requests from clients that found this one in a tail: queued on its tenure, or answered RETRY.
   * The loop runs while this client may be named in a tail, and `serveIdleNs` beyond, so a client
   * that stopped taking locks (a finished run, live) does not keep a receive pending for ever.
   */
  private async serveRequests(): Promise<void> {
    const { mailbox, clock } = this.ports;
    this.serving = true;
    try {
      for (;;) {
        const until = clock.nowNs() + this.options.serveIdleNs;
        const request = await mailbox.receive((m) => m.kind === 'custom' && (m.value === REQUEST_EXCLUSIVE || m.value === REQUEST_SHARED), { deadlineNs: until });
        if (!request) {
          // Idle with nothing held, or the mailbox closed (undefined before the deadline).
          if (this.tenures.size === 0 || clock.nowNs() < until) return;
          continue;
        }
        this.serve(request);
      }
    } finally {
      this.serving = false;
    }
  }

  private serve(request: Message): void {
    const tenure = this.tenures.get(request.lock);
    if (!tenure) {
      this.ports.mailbox.send({ kind: 'custom', to: request.from, lock: request.lock, value: RETRY, ...(request.epoch !== undefined ? { epoch: request.epoch } : {}) });
      return;
    }
    if (request.value === REQUEST_EXCLUSIVE) tenure.successor = request;
    else tenure.readers.push(request);
    tenure.wake?.();
  }

  private async takeShared(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    const { verbs, mailbox } = this.ports;
    for (;;) {
      op.verbs++;
      const word = await verbs.faa(addr, 1n, { lock });
      if (tailOf(word) === 0n) return;
      // An exclusive requester is in the tail: take the count back so it is not held up, and ask it.
      op.verbs++;
      await verbs.faa(addr, MINUS_ONE, { lock });
      const id = this.nextRequest++;
      mailbox.send({ kind: 'custom', to: clientOfTag(tailOf(word)), lock, value: REQUEST_SHARED, epoch: id });
      const reply = await this.awaitReply(lock, id, deadline);
      if (!reply) {
        // Gave up: if the grant still comes, the granter counted this reader in; count it out.
        void this.awaitReply(lock, id).then((late) => (late?.kind === 'grant' ? verbs.faa(addr, MINUS_ONE, { lock }) : undefined));
        deadline.check();
        throw new LockAbortedError(lock, 'ncosed shared request ended without a reply');
      }
      if (reply.kind === 'grant') return;
      op.retries++;
      deadline.check();
    }
  }

  private async takeExclusive(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    // An exclusive acquire of this lock that gave up may still be queued: it passes the lock on
    // when its grant comes; one tenure per lock and client, so wait for that first.
    while (this.tenures.has(lock)) {
      op.retries++;
      await deadline.pause(this.options.pollIntervalNs);
    }
    const tenure: Tenure = { readers: [] };
    this.tenures.set(lock, tenure);
    if (!this.serving) void this.serveRequests();
    const { verbs, mailbox } = this.ports;
    let seen = 0n;
    for (;;) {
      op.verbs++;
      let old: bigint;
      try {
        old = await verbs.cas(addr, seen, pack(this.tag, countOf(seen)), { lock });
      } catch (error) {
        if (!isUncertain(error) || this.options.mutantNoReadBack) throw error;
        old = await this.readBackEnqueue(addr, lock, seen, error);
      }
      if (old === seen) break;
      seen = old;
      op.retries++;
      try {
        deadline.check();
      } catch (error) {
        // Not in the tail yet: nobody can have queued on this tenure.
        this.tenures.delete(lock);
        throw error;
      }
    }
    const predecessor = tailOf(seen);
    if (predecessor !== 0n) {
      const id = this.nextRequest++;
      mailbox.send({ kind: 'custom', to: clientOfTag(predecessor), lock, value: REQUEST_EXCLUSIVE, epoch: id });
      const reply = await this.awaitReply(lock, id, deadline);
      if (reply?.kind !== 'grant') {
        // In the queue and cannot leave it: pass the lock on as soon as it arrives.
        if (!reply) void this.awaitReply(lock, id).then((late) => (late?.kind === 'grant' ? this.passOn(addr, lock) : undefined));
        deadline.check();
        throw new LockAbortedError(lock, `ncosed predecessor ${clientKey(clientOfTag(predecessor))} answered an exclusive request with RETRY`);
      }
      if (this.options.mutantSkipReaderDrain) return;
    } else if (countOf(seen) === 0n) {
      return;
    }
    // Readers granted before (by the predecessor, or with no tail) must leave first.
    try {
      for (;;) {
        op.verbs++;
        if (countOf(await this.readWord(addr, lock)) === 0n) return;
        op.retries++;
        await deadline.pause(this.options.pollIntervalNs);
      }
    } catch (error) {
      await this.passOn(addr, lock);
      throw error;
    }
  }

  /** Exclusive release: grant the readers queued on me (one FAA for all), then my successor, or leave the tail. */
  private async passOn(addr: RemoteAddr, lock: LockId): Promise<void> {
    const { verbs, mailbox } = this.ports;
    const tenure = this.tenures.get(lock);
    if (!tenure) throw new LockAbortedError(lock, `client ${this.key} releases lock ${lock} it does not hold exclusively`);
    let expected = pack(this.tag, 0n);
    for (;;) {
      while (tenure.readers.length > 0) {
        const readers = tenure.readers.splice(0);
        await verbs.faa(addr, BigInt(readers.length), { lock });
        for (const r of readers) mailbox.send({ kind: 'grant', to: r.from, lock, ...(r.epoch !== undefined ? { epoch: r.epoch } : {}) });
      }
      if (tenure.successor) {
        const s = tenure.successor;
        this.tenures.delete(lock);
        mailbox.send({ kind: 'grant', to: s.from, lock, ...(s.epoch !== undefined ? { epoch: s.epoch } : {}) });
        return;
      }
      const old = await verbs.cas(addr, expected, pack(0n, countOf(expected)), { lock });
      if (old === expected) {
        // Out of the tail: readers that queued during the CAS retry (their count would come too late).
        this.tenures.delete(lock);
        for (const r of tenure.readers.splice(0)) mailbox.send({ kind: 'custom', to: r.from, lock, value: RETRY, ...(r.epoch !== undefined ? { epoch: r.epoch } : {}) });
        return;
      }
      if (tailOf(old) === this.tag) {
        expected = old;
        continue;
      }
      // Someone replaced me in the tail: its request is on the way.
      if (!tenure.successor) await new Promise<void>((resolve) => (tenure.wake = resolve));
      tenure.wake = undefined;
    }
  }

  /**
   * After the CAS that puts this client into the tail failed `unreachable`: once the link is back,
   * read the word. This client's tag in the tail means the CAS ran (no other verb writes it while
   * this tenure lasts), so it replaced `seen`: the acquire goes on from there. Any other tail is
   * not decidable (it did not run, or a later requester replaced this one since): `error` again.
   */
  private async readBackEnqueue(addr: RemoteAddr, lock: LockId, seen: bigint, error: unknown): Promise<bigint> {
    let waitNs = READ_BACK_FIRST_WAIT_NS;
    for (let attempt = 0; attempt < READ_BACK_ATTEMPTS; attempt++) {
      await this.ports.clock.sleep(waitNs);
      waitNs = Math.min(waitNs * 2, READ_BACK_MAX_WAIT_NS);
      let word: bigint;
      try {
        word = await this.readWord(addr, lock);
      } catch (failed) {
        if (isUncertain(failed)) continue;
        throw failed;
      }
      if (tailOf(word) === this.tag) return seen;
      break;
    }
    throw error;
  }

  /** The grant or RETRY answering request `id`; undefined at the deadline (none: wait for ever). */
  private awaitReply(lock: LockId, id: bigint, deadline?: AcquireDeadline): Promise<Message | undefined> {
    const match = (m: Message) => m.lock === lock && m.epoch === id && (m.kind === 'grant' || (m.kind === 'custom' && m.value === RETRY));
    if (!deadline) return this.ports.mailbox.receive(match);
    const options = { ...(Number.isFinite(deadline.atNs) ? { deadlineNs: deadline.atNs } : {}), ...(deadline.signal ? { signal: deadline.signal } : {}) };
    return this.ports.mailbox.receive(match, options);
  }

  private async readWord(addr: RemoteAddr, lock: LockId): Promise<bigint> {
    const bytes = await this.ports.verbs.read(addr, 8, { lock });
    return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  }
}

/** Read-back pacing after a lost completion: 1 µs doubling to 0.5 ms, at most 200 reads. */
const READ_BACK_FIRST_WAIT_NS = 1_000;
const READ_BACK_MAX_WAIT_NS = 500_000;
const READ_BACK_ATTEMPTS = 200;

export const ncosed: ProtocolDefinition = {
  id: 'ncosed',
  // No lease and no repair (README, "Failures").
  recovery: { compute: { mechanism: 'none', action: 'a dead exclusive holder keeps the tail and its queued requesters wait; a dead reader its count; held until a reset between runs' } },
  // No lease and no repair: a crashed exclusive holder keeps the tail (README "Failures").
  swarm: { pauses: 'beyond-lease', partitions: true },
  summary: 'N-CoSED: CAS for the last exclusive requester, FAA for readers, conflicts queued by request/grant messages between clients',
  fabric: 'verbs',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: NCOSED_OPTION_HELP,
  createClient: (ports, options) => new NcosedClient(ports, readNcosedOptions(options)),
};
