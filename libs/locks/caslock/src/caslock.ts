import { AcquireDeadline, AcquireSpan, LOCK_ATTR, OptionReader, TruncatedBackoff, WordReconciler, isUncertain } from '@lockfabric/locks-common';
import type { OwnedWord, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { TableLostError, clientKey, lockAddress } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, RemoteAddr, Span, VerbOptions } from '@lockfabric/ports';
import { FREE, MINUS_ONE, ONE_READER, holderTag, readerField, writerField, writerWord } from './lock-word.js';

export interface CasLockOptions {
  /** `exclusive`: every acquire takes the word exclusively; `rw`: readers share it by counting. */
  readonly variant: 'exclusive' | 'rw';
  /** Truncated exponential backoff between failed attempts; off means spin. */
  readonly backoff: boolean;
  readonly backoffInitialNs: number;
  readonly backoffMaxNs: number;
  /**
   * How a client on the lock's own memory node reaches the word. `nic` loops its atomics through
   * the NIC (correct). `cpu` uses CPU compare-and-swap — the naive mix of local and remote atomics
   * that ALock's paper shows is not mutually exclusive; kept to prove the emulator models the gap.
   */
  readonly localAtomics: 'nic' | 'cpu';
  /** Test-only mutant: read the word and write the holder if it looked free, without CAS. */
  readonly mutantSkipCompare: boolean;
  /** Test-only mutant: after a verb fails `unreachable`, never read the word back (a lost CAS leaks the lock). */
  readonly mutantNoReadBack: boolean;
  /** Test-only mutant: a new acquire does not stop a read-back still running on its word. */
  readonly mutantNoTakeOver: boolean;
  /** Test-only mutant: an atomic that won the word on a table lost before its completion came back still grants. */
  readonly mutantGrantFromLostTable: boolean;
}

interface CasGrant extends Grant {
  readonly addr: RemoteAddr;
  readonly heldAs: LockMode;
  readonly viaCpu: boolean;
}

export const CASLOCK_OPTION_HELP = {
  variant: 'exclusive (default) or rw: writer tag in the high half, reader count in the low half (reader-preferring)',
  backoff: 'true for truncated exponential backoff between attempts (default false: spin)',
  backoffInitialNs: 'first backoff bound in ns (default 1000)',
  backoffMaxNs: 'backoff cap in ns (default 100000)',
  localAtomics: 'nic (default) or cpu: how clients on the memory node itself do atomics; cpu is unsafe',
  mutantSkipCompare: 'test-only: acquire by read-then-write instead of CAS (broken on purpose)',
  mutantNoReadBack: 'test-only: never read a word back after a verb failed unreachable (leaks locks on lost completions)',
  mutantNoTakeOver: 'test-only: an acquire leaves a running read-back of its word alone, which may free the new hold (broken on purpose)',
  mutantGrantFromLostTable: 'test-only: a CAS or FAA that won on a table lost before its completion came back still grants (broken on purpose)',
};

export function readCasLockOptions(options?: ProtocolOptions): CasLockOptions {
  const reader = new OptionReader('caslock', options);
  const parsed: CasLockOptions = {
    variant: reader.choice('variant', ['exclusive', 'rw'] as const, 'exclusive'),
    backoff: reader.boolean('backoff', false),
    backoffInitialNs: reader.number('backoffInitialNs', 1_000, { min: 1 }),
    backoffMaxNs: reader.number('backoffMaxNs', 100_000, { min: 1 }),
    localAtomics: reader.choice('localAtomics', ['nic', 'cpu'] as const, 'nic'),
    mutantSkipCompare: reader.boolean('mutantSkipCompare', false),
    mutantNoReadBack: reader.boolean('mutantNoReadBack', false),
    mutantNoTakeOver: reader.boolean('mutantNoTakeOver', false),
    mutantGrantFromLostTable: reader.boolean('mutantGrantFromLostTable', false),
  };
  reader.done();
  return parsed;
}

/**
 * The CAS spinlock every paper compares against. Uncontended verbs: exclusive variant 1 CAS to
 * acquire and 1 WRITE to release; rw variant 1 CAS / 1 CAS for writers, 1 FAA / 1 FAA for readers.
 *
 * Lost completions: a CAS or release that fails `unreachable` may have run. The word then says
 * whose it is, because the tag names this client: the client reads it back once the link is up and
 * gives up a hold of its own (`WordReconciler`); its own next acquire that finds its tag holds the
 * lock. A reader's FAA is anonymous (a count), so a lost reader announcement is not repaired.
 */
export class CasLockClient implements LockClient<CasGrant> {
  private readonly backoff: TruncatedBackoff | undefined;
  private readonly tag: bigint;
  private readonly reconciler: WordReconciler;
  /**
   * Words a verb of this client may have changed without an answer since its last grant there.
   * Only on these does finding its own tag mean "my lost CAS ran": a release the workload skipped
   * on purpose (ShiftLock Fig. 13) leaves the tag too, and a plain spinlock never gets that back.
   */
  private readonly uncertainWords = new Set<string>();
  private currentSpan: Span | undefined;
  /** `node/client`, named on every span: made once, not per operation. */
  private readonly key: string;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: CasLockOptions,
  ) {
    this.tag = holderTag(ports.self);
    this.key = clientKey(ports.self);
    this.reconciler = new WordReconciler(ports.verbs, ports.clock);
    this.backoff = options.backoff
      ? new TruncatedBackoff(ports.random, { initialNs: options.backoffInitialNs, maxNs: options.backoffMaxNs, factor: 2 })
      : undefined;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<CasGrant> {
    const heldAs: LockMode = this.options.variant === 'rw' ? mode : 'exclusive';
    const addr = lockAddress(this.ports.locks, lock);
    const viaCpu = this.options.localAtomics === 'cpu' && this.ports.verbs.isLocal(addr);
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'caslock', lock, mode, this.key);
    this.currentSpan = op.span;
    this.backoff?.reset();
    try {
      // A read-back of this word still running stops here: from now on this acquire decides.
      const settling = heldAs === 'exclusive' && !viaCpu && !this.options.mutantNoTakeOver ? this.reconciler.takeOver(addr) : undefined;
      if (settling) await settling;
      deadline.check();
      if (heldAs === 'exclusive') await this.takeExclusive(addr, lock, viaCpu, deadline, op);
      else await this.takeShared(addr, lock, viaCpu, deadline, op);
      // Usually empty: no key string is built per acquire unless a lost verb left a word uncertain.
      if (this.uncertainWords.size > 0) this.uncertainWords.delete(wordKey(addr));
      // The winning atomic ran on a table the memory node has since lost (a cut held its
      // completion past the restart): the new table may be granted to anyone, so this is no grant.
      if (!this.options.mutantGrantFromLostTable && this.ports.tables?.lost()) throw new TableLostError(lock, 'the memory node restarted before this acquire’s winning atomic completed');
      op.granted();
      return { lock, mode, addr, heldAs, viaCpu };
    } catch (error) {
      if (heldAs === 'exclusive') this.readBackIfUncertain(error, addr, lock);
      op.failed(error);
      throw error;
    } finally {
      this.currentSpan = undefined;
    }
  }

  async release(grant: CasGrant): Promise<void> {
    const span = this.ports.trace.startSpan('lock.release', {
      attributes: { [LOCK_ATTR.protocol]: 'caslock', [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: this.key },
    });
    this.currentSpan = span;
    try {
      await this.releaseWord(grant);
    } catch (error) {
      if (grant.heldAs === 'exclusive') this.readBackIfUncertain(error, grant.addr, grant.lock);
      span.recordError(error);
      throw error;
    } finally {
      this.currentSpan = undefined;
      span.end();
    }
  }

  private async releaseWord(grant: CasGrant): Promise<void> {
    const { verbs } = this.ports;
    this.ports.phases?.enter('initial-atomic');
    if (this.options.variant === 'exclusive') {
      if (grant.viaCpu) await verbs.cpu.store(grant.addr, FREE);
      else await verbs.write(grant.addr, new Uint8Array(8), this.verbOptions(grant.lock));
    } else if (grant.heldAs === 'shared') {
      if (grant.viaCpu) await verbs.cpu.faa(grant.addr, MINUS_ONE);
      else await verbs.faa(grant.addr, MINUS_ONE, this.verbOptions(grant.lock));
    } else {
      // Clear the writer field and keep whatever reader count waiting readers raised meanwhile.
      let expected = writerWord(this.tag);
      for (;;) {
        const old = await this.cas(grant.addr, grant.lock, grant.viaCpu, expected, readerField(expected));
        if (old === expected) return;
        expected = old;
      }
    }
  }

  /** The word as this client's hold: its tag (exclusive) or its writer field (rw). */
  private owned(addr: RemoteAddr, lock: LockId): OwnedWord {
    return { addr, lock, mine: (word) => this.holds(word), without: (word) => (this.options.variant === 'exclusive' ? FREE : readerField(word)) };
  }

  private holds(word: bigint): boolean {
    return this.options.variant === 'exclusive' ? word === this.tag : writerField(word) === this.tag;
  }

  /** After a verb that may or may not have run, the word is read back once the link is up. */
  private readBackIfUncertain(error: unknown, addr: RemoteAddr, lock: LockId): void {
    if (!isUncertain(error) || this.options.mutantNoReadBack) return;
    this.uncertainWords.add(wordKey(addr));
    this.reconciler.reconcile(this.owned(addr, lock));
  }

  /** exclusive variant: CAS the tag into a free word; rw variant: CAS the writer field into a zero word. */
  private async takeExclusive(addr: RemoteAddr, lock: LockId, viaCpu: boolean, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    const mine = this.options.variant === 'exclusive' ? this.tag : writerWord(this.tag);
    this.ports.phases?.enter('initial-atomic');
    for (;;) {
      op.verbs++;
      if (this.options.mutantSkipCompare) {
        const seen = await this.load(addr, lock, viaCpu);
        if (seen === FREE) {
          op.verbs++;
          await this.store(addr, lock, viaCpu, mine);
          return;
        }
      } else {
        const old = await this.cas(addr, lock, viaCpu, FREE, mine);
        // Our own tag: an earlier CAS of ours ran although its answer was lost; the hold is ours.
        if (old === FREE || (this.holds(old) && this.uncertainWords.has(wordKey(addr)))) return;
      }
      op.retries++;
      // Every attempt after the first, with its backoff, is the paper's RT (ShiftLock Table 4).
      this.ports.phases?.enter('retries');
      if (this.mustPause(deadline)) await this.pauseBeforeRetry(deadline);
    }
  }

  /** rw variant: announce with FAA +1, then hold as soon as the writer field reads zero. */
  private async takeShared(addr: RemoteAddr, lock: LockId, viaCpu: boolean, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    this.ports.phases?.enter('initial-atomic');
    op.verbs++;
    let word = viaCpu ? await this.ports.verbs.cpu.faa(addr, ONE_READER) : await this.ports.verbs.faa(addr, ONE_READER, this.verbOptions(lock));
    while (writerField(word) !== 0n) {
      op.retries++;
      this.ports.phases?.enter('retries');
      try {
        if (this.mustPause(deadline)) await this.pauseBeforeRetry(deadline);
      } catch (error) {
        // Giving up: withdraw the announcement so writers are not held off forever.
        if (viaCpu) await this.ports.verbs.cpu.faa(addr, MINUS_ONE);
        else await this.ports.verbs.faa(addr, MINUS_ONE, { lock });
        throw error;
      }
      op.verbs++;
      word = await this.load(addr, lock, viaCpu);
    }
  }

  /** Verbs carry the running acquire's span context, so the memory node's verb spans join its trace. */
  private verbOptions(lock: LockId): VerbOptions {
    const trace = this.currentSpan?.context;
    return trace ? { lock, trace } : { lock };
  }

  /**
   * Whether a retry goes through `pauseBeforeRetry`: with backoff, or when the deadline would stop
   * it. A spin that goes on skips the async call, whose promise and microtask hop per retry were
   * a fifth of caslock's promises at 256 clients on `sim`; the paths that pause or fail keep their
   * hops (what this does to schedules: docs/decisions/0015-where-sim-cpu-goes.md).
   */
  private mustPause(deadline: AcquireDeadline): boolean {
    return this.backoff !== undefined || deadline.signal?.aborted === true || deadline.remainingNs() <= 0;
  }

  private async pauseBeforeRetry(deadline: AcquireDeadline): Promise<void> {
    if (this.backoff) await deadline.pause(this.backoff.nextDelayNs());
    else deadline.check();
  }

  private cas(addr: RemoteAddr, lock: LockId, viaCpu: boolean, compare: bigint, swap: bigint): Promise<bigint> {
    return viaCpu ? this.ports.verbs.cpu.cas(addr, compare, swap) : this.ports.verbs.cas(addr, compare, swap, this.verbOptions(lock));
  }

  private async load(addr: RemoteAddr, lock: LockId, viaCpu: boolean): Promise<bigint> {
    if (viaCpu) return this.ports.verbs.cpu.load(addr);
    const bytes = await this.ports.verbs.read(addr, 8, this.verbOptions(lock));
    return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  }

  private async store(addr: RemoteAddr, lock: LockId, viaCpu: boolean, value: bigint): Promise<void> {
    if (viaCpu) return this.ports.verbs.cpu.store(addr, value);
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, value, true);
    await this.ports.verbs.write(addr, bytes, this.verbOptions(lock));
  }
}

export const caslock: ProtocolDefinition = {
  id: 'caslock',
  // The word names the holder's node: once the memory node refuses the dead node's verbs, freeing it is safe.
  recovery: { compute: { mechanism: 'fence', action: 'memory node fences the dead node, then CASes its holder tags to free (rw: dead writer field cleared; anonymous reader counts stay)' } },
  // No lease and no repair: a dead holder keeps its word set (the baseline's known limit). A lost
  // completion is repaired by the read-back of a live client (seed 13, tests/lost-completions).
  swarm: { pauses: 'beyond-lease', memoryRestart: true, partitions: true, flushedVerbs: true },
  summary: 'CAS spinlock on one 8-byte word (exclusive, or reader-writer by counting), optional backoff',
  fabric: 'verbs',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: CASLOCK_OPTION_HELP,
  createClient: (ports, options) => new CasLockClient(ports, readCasLockOptions(options)),
};

function wordKey(addr: RemoteAddr): string {
  return `${addr.node}:${addr.region}:${addr.offset}`;
}
