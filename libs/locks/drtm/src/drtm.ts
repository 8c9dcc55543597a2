import { AcquireDeadline, AcquireSpan, OptionReader, TruncatedBackoff, WordReconciler, isUncertain } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError, LeaseExpiredError, LockFabricError, NS_PER_MS, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, RemoteAddr } from '@lockfabric/ports';
import { FREE, isWriteLocked, leaseEndNs, leaseWord, writeLockedWord } from './lock-word.js';

export interface DrtmOptions {
  /** Length of a read lease a reader installs (the artifact's RLEASE_TIME, 1 ms). */
  readonly leaseNs: number;
  /** Δ: the most any client's clock may be off the shared time (the artifact's DELTA, 50 µs). */
  readonly driftNs: number;
  /** Lease a reader must still have left to join an existing lease (the artifact's TX_TIME, 0.5 ms). */
  readonly txMarginNs: number;
  /** Truncated exponential backoff between failed CAS attempts; off (default) retries at once, like the artifact. */
  readonly backoff: boolean;
  readonly backoffInitialNs: number;
  readonly backoffMaxNs: number;
  /** When an unexpired read lease is the only obstacle, sleep until it has expired instead of retrying the CAS. */
  readonly sleepUntilExpiry: boolean;
  /** Test-only mutant: a writer takes over a read lease without waiting for it to expire. */
  readonly mutantWriterIgnoresLease: boolean;
  /** Test-only mutant: after a writer's CAS fails `unreachable`, never read the word back. */
  readonly mutantNoReadBack: boolean;
}

export const DRTM_OPTION_HELP = {
  leaseNs: 'read lease length in ns (default 1000000)',
  driftNs: 'clock skew bound Δ in ns: a lease counts as expired only Δ after its end (default 50000)',
  txMarginNs: 'lease a reader needs left, beyond Δ, to share an existing lease; also the longest a reader may hold (default 500000)',
  backoff: 'true for truncated exponential backoff between CAS attempts (default false: retry at once)',
  backoffInitialNs: 'first backoff bound in ns (default 1000)',
  backoffMaxNs: 'backoff cap in ns (default 100000)',
  sleepUntilExpiry: 'true to sleep out an unexpired read lease instead of retrying the CAS against it (default false)',
  mutantWriterIgnoresLease: 'test-only: writers CAS over unexpired read leases (broken on purpose)',
  mutantNoReadBack: 'test-only: never read a word back after a writer CAS failed unreachable (leaks write locks on lost completions)',
};

export function readDrtmOptions(options?: ProtocolOptions): DrtmOptions {
  const reader = new OptionReader('drtm', options);
  const parsed: DrtmOptions = {
    leaseNs: reader.number('leaseNs', 1_000_000, { min: 1_000, integer: true }),
    driftNs: reader.number('driftNs', 50_000, { min: 0 }),
    txMarginNs: reader.number('txMarginNs', 500_000, { min: 0 }),
    backoff: reader.boolean('backoff', false),
    backoffInitialNs: reader.number('backoffInitialNs', 1_000, { min: 1 }),
    backoffMaxNs: reader.number('backoffMaxNs', 100_000, { min: 1 }),
    sleepUntilExpiry: reader.boolean('sleepUntilExpiry', false),
    mutantWriterIgnoresLease: reader.boolean('mutantWriterIgnoresLease', false),
    mutantNoReadBack: reader.boolean('mutantNoReadBack', false),
  };
  reader.done();
  if (parsed.leaseNs <= parsed.driftNs + parsed.txMarginNs) {
    throw new ConfigError([
      `drtm option leaseNs (${parsed.leaseNs} ns) must exceed driftNs + txMarginNs (${parsed.driftNs + parsed.txMarginNs} ns), or a reader's own lease would be too short to use`,
    ]);
  }
  return parsed;
}

export interface DrtmGrant extends Grant {
  readonly addr: RemoteAddr;
  /** Shared grants: the lease holds until this time on this client's clock; release after it fails. */
  readonly validUntilNs?: number;
}

/** A write-lock release found the word changed under it: someone broke the lock (only mutants can). */
export class LockWordCorruptedError extends LockFabricError {
  readonly code = 'LOCK_WORD_CORRUPTED';
  constructor(
    readonly lock: LockId,
    readonly found: bigint,
  ) {
    super(`write-lock release of lock ${lock} found word 0x${found.toString(16)} instead of its own write lock`);
  }
}

/**
 * DrTM's lock (SOSP'15) as ShiftLock and DSLR evaluate it: CAS for both modes, read leases on
 * loosely synchronised clocks.
 *
 * Writer: CAS(expected → W|owner), `expected` starting at 0 and taking the observed word once it
 * is a read lease that has expired by Δ. Reader: CAS(expected → lease ending now + leaseNs); on
 * failure, share an observed lease that still has Δ + txMargin left (no write), CAS over one that
 * has expired by Δ, and retry otherwise. Release: a writer CASes its word back to 0; a reader does
 * nothing, its lease runs out. Uncontended: one CAS per acquire in either mode, one CAS per
 * exclusive release, no verb for a shared release.
 *
 * Safety rests on the clocks: with every clock within Δ of the shared time, a reader's lease is
 * used until `end − Δ` on its clock and a writer takes the word only after `end + Δ` on its own.
 * A reader must release within txMarginNs of its grant; later, release reports LeaseExpiredError.
 * Write locks have no lease: a writer that dies holding one blocks the lock for good.
 *
 * Lost completions: a writer's CAS (acquire or release) that fails `unreachable` may have run. The
 * write-locked word names the client, so the client reads it back once the link is up and frees a
 * write lock of its own (`WordReconciler`); its own next write acquire that finds it holds it. A
 * reader's lost CAS needs nothing: the lease runs out.
 */
export class DrtmClient implements LockClient<DrtmGrant> {
  private readonly backoff: TruncatedBackoff | undefined;
  private readonly locked: bigint;
  private readonly readBack: WordReconciler;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: DrtmOptions,
  ) {
    this.locked = writeLockedWord(ports.self.node, ports.self.client);
    this.readBack = new WordReconciler(ports.verbs, ports.clock);
    this.backoff = options.backoff
      ? new TruncatedBackoff(ports.random, { initialNs: options.backoffInitialNs, maxNs: options.backoffMaxNs, factor: 2 })
      : undefined;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<DrtmGrant> {
    const addr = lockAddress(this.ports.locks, lock);
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'drtm', lock, mode, clientKey(this.ports.self));
    this.backoff?.reset();
    try {
      // A read-back of this word still running stops here: from now on this acquire decides.
      const settling = mode === 'exclusive' ? this.readBack.takeOver(addr) : undefined;
      if (settling) await settling;
      deadline.check();
      const grant = mode === 'exclusive' ? await this.takeWriteLock(addr, lock, deadline, op) : await this.takeReadLease(addr, lock, deadline, op);
      op.granted();
      return grant;
    } catch (error) {
      if (mode === 'exclusive') this.readBackIfUncertain(error, addr, lock);
      op.failed(error);
      throw error;
    }
  }

  async release(grant: DrtmGrant): Promise<void> {
    if (grant.mode === 'shared') {
      // Nothing to undo: the lease expires by itself. A reader that held past it was not protected.
      if (grant.validUntilNs !== undefined && this.ports.clock.nowNs() > grant.validUntilNs) {
        throw new LeaseExpiredError(grant.lock, this.options.leaseNs / NS_PER_MS);
      }
      return;
    }
    let found: bigint;
    try {
      found = await this.ports.verbs.cas(grant.addr, this.locked, FREE, { lock: grant.lock });
    } catch (error) {
      this.readBackIfUncertain(error, grant.addr, grant.lock);
      throw error;
    }
    if (found !== this.locked) throw new LockWordCorruptedError(grant.lock, found);
  }

  /** After a writer's CAS that may or may not have run, the word is read back once the link is up. */
  private readBackIfUncertain(error: unknown, addr: RemoteAddr, lock: LockId): void {
    if (!isUncertain(error) || this.options.mutantNoReadBack) return;
    const locked = this.locked;
    this.readBack.reconcile({ addr, lock, mine: (word) => word === locked, without: () => FREE });
  }

  private async takeWriteLock(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<DrtmGrant> {
    let expected = FREE;
    for (;;) {
      op.verbs++;
      const found = await this.ports.verbs.cas(addr, expected, this.locked, { lock });
      // Our own write lock: an earlier CAS of ours ran although its answer was lost.
      if (found === expected || (found === this.locked && !this.options.mutantNoReadBack)) return { lock, mode: 'exclusive', addr };
      op.retries++;
      if (found === FREE) {
        // Freed since we looked: try again against the free word at once.
        expected = FREE;
        deadline.check();
        continue;
      }
      if (isWriteLocked(found)) {
        expected = FREE;
      } else {
        const endNs = leaseEndNs(found);
        const nowNs = this.ports.clock.nowNs();
        if (this.options.mutantWriterIgnoresLease || this.expired(endNs, nowNs)) {
          // Take over the expired lease right away: CAS against exactly what is there.
          expected = found;
          deadline.check();
          continue;
        }
        if (this.options.sleepUntilExpiry) {
          expected = found;
          await deadline.pause(endNs + this.options.driftNs - nowNs + 1);
          continue;
        }
      }
      await this.pauseBeforeRetry(deadline);
    }
  }

  private async takeReadLease(addr: RemoteAddr, lock: LockId, deadline: AcquireDeadline, op: AcquireSpan): Promise<DrtmGrant> {
    const { clock, verbs } = this.ports;
    let expected = FREE;
    for (;;) {
      const mine = leaseWord(clock.nowNs() + this.options.leaseNs);
      op.verbs++;
      const found = await verbs.cas(addr, expected, mine, { lock });
      if (found === expected) {
        const grant = this.readGrant(lock, addr, leaseEndNs(mine));
        if (grant.validUntilNs - clock.nowNs() >= this.options.txMarginNs) return grant;
        // The CAS took so long that too little of the new lease is left: push its end out (only
        // ever later, which keeps everyone who joined it covered) and try again.
        op.retries++;
        expected = mine;
        deadline.check();
        continue;
      }
      op.retries++;
      if (found === FREE) {
        expected = FREE;
        deadline.check();
        continue;
      }
      if (isWriteLocked(found)) {
        expected = FREE;
      } else {
        const endNs = leaseEndNs(found);
        const nowNs = clock.nowNs();
        if (this.expired(endNs, nowNs)) {
          expected = found;
          deadline.check();
          continue;
        }
        if (nowNs < endNs - this.options.driftNs - this.options.txMarginNs) return this.readGrant(lock, addr, endNs);
        // Too little of this lease is left to use, and it is not expired yet: the artifact retries
        // the same CAS until it is.
        if (this.options.sleepUntilExpiry) {
          expected = found;
          await deadline.pause(endNs + this.options.driftNs - nowNs + 1);
          continue;
        }
      }
      await this.pauseBeforeRetry(deadline);
    }
  }

  private readGrant(lock: LockId, addr: RemoteAddr, endNs: number): DrtmGrant & { readonly validUntilNs: number } {
    return { lock, mode: 'shared', addr, validUntilNs: endNs - this.options.driftNs };
  }

  /** A lease is over for everyone only once Δ has passed beyond its end on this clock. */
  private expired(endNs: number, nowNs: number): boolean {
    return nowNs > endNs + this.options.driftNs;
  }

  private async pauseBeforeRetry(deadline: AcquireDeadline): Promise<void> {
    if (this.backoff) await deadline.pause(this.backoff.nextDelayNs());
    else deadline.check();
  }
}

export const drtm: ProtocolDefinition = {
  id: 'drtm',
  // Read leases last λ + Δ (1 ms + 50 µs) and run out; write words name the owner machine.
  recovery: { compute: { mechanism: 'fence', action: 'read leases expire after λ+Δ; write locks owned by the dead machine are freed by the memory node after fencing it' } },
  // Live: a lease long enough for a verb over gRPC (~100 µs, not RDMA's ~2 µs), clocks as loose as processes'.
  liveDefaults: { leaseNs: 50_000_000, driftNs: 1_000_000, txMarginNs: 20_000_000 },
  // Write locks have no lease: a dead writer keeps its lock (DrTM relies on its transaction layer).
  // Clocks may be off by up to 40 µs between nodes, inside the default Δ = 50 µs (driftNs).
  // A lost completion is repaired by the writer's read-back (tests/lost-completions).
  swarm: { pauses: 'beyond-lease', memoryRestart: true, partitions: true, flushedVerbs: true, clockSkewNs: 40_000 },
  summary: "DrTM's lock: CAS for writers, CAS-installed read leases on synchronised clocks with a skew margin, no-op shared release",
  fabric: 'verbs',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: DRTM_OPTION_HELP,
  createClient: (ports, options) => new DrtmClient(ports, readDrtmOptions(options)),
};
