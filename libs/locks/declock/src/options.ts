import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';
import { capacityFitting } from './table-layout.js';

/** Settings of the CQL layer, shared by the flat lock and the hierarchical one. */
export interface CqlOptions {
  /** Queue capacity C (power of two); the lock entry must hold 8 + 8C bytes (+8 hierarchical). */
  readonly capacity: number;
  /** A waiter that has no grant after this long resets the lock (CN failure, lost grant). */
  readonly acquireTimeoutNs: number;
  /** Added per compute node index so waiters of different CNs do not reset at once. */
  readonly acquireTimeoutStaggerNs: number;
  /**
   * Failure detector stand-in: a reset whose queue has not drained (no header change) for this
   * long declares the remaining members failed and completes anyway. Infinity (default) waits
   * for every member, which is always safe; a finite value is safe only if it exceeds the longest
   * critical section, because a declared-failed holder that is merely slow keeps its hold.
   */
  readonly suspectAfterNs: number;
  /** Refetches of obsolete entries before a release gives up and resets (spec MAX_REFETCH). */
  readonly maxRefetch: number;
  /**
   * How long a release refetches an entry that is not yet valid before it gives up and resets:
   * a waiter whose FAA landed but whose entry WRITE never does (its node died in between) would
   * otherwise keep the releaser, and on a hierarchical node every local client behind it, busy
   * for maxRefetch READs (seconds on a real network). 0 (default): as long as a waiter waits for
   * its grant (acquireTimeoutNs + stagger); inf: only maxRefetch bounds it.
   */
  readonly refetchTimeoutNs: number;
  readonly retryBackoffInitialNs: number;
  readonly retryBackoffMaxNs: number;
  /** Paper-literal: no acquirer-side `qsize ≥ C` check; overflow is found lazily by releasers. */
  readonly paperLiteralLazyOverflow: boolean;
  /**
   * Admit more contenders than C (up to the hard limit 2C−1, past which qsize spills into qhead):
   * the acquirer-side overflow check then resets the lock. Off: more than C is refused at start.
   */
  readonly allowQueueOverflow: boolean;
  /** Test-only mutant: a reader is granted at once when any reader is queued (ignores waiting writers). */
  readonly mutantReaderGrant: boolean;
  /** Test-only mutant: a releasing writer grants every waiting reader in the snapshot, skipping over writers. */
  readonly mutantBatchPastWriters: boolean;
  /** Test-only mutant: once a compute node is declared dead, a reset finishes without waiting for the live nodes' RESET_ACKs. */
  readonly mutantIgnoreResetAcks: boolean;
  /**
   * Test-only mutant: a compute node keeps its lock state across a memory-node restart (§4.6): no
   * reset before use, and grants and local handoffs on the lost table.
   */
  readonly mutantNoTableReset: boolean;
  /** Test-only mutant: an acquire FAA whose completion comes after its table was lost still grants. */
  readonly mutantGrantFromLostFaa: boolean;
}

export type FairnessPolicy = 'tf' | 'pf';

/**
 * Who gets the lock when the last local holder leaves and clients of the same node wait (DecLock
 * §6.3, Fig. 14): `timestamp` (DecLock's own: a local waiter only if it is earlier than every remote
 * one), `remote-prefer` (never locally: back to the CQL lock), `local-prefer` (locally, up to 255
 * local grants per CQL ownership, i.e. the artifact's 256 grants), `local-bound` (at most
 * `localBound` local grants per CQL ownership, as in Sherman). The three non-timestamp policies are
 * phase-fair among local readers and writers, as in the paper.
 */
export type HandoffPolicy = 'timestamp' | 'remote-prefer' | 'local-prefer' | 'local-bound';

/** Local grants one CQL ownership may make under a handoff policy; undefined = decided by timestamps. */
export function localGrantLimit(options: Pick<HierarchicalOptions, 'handoff' | 'localBound' | 'mutantNoGrantLimit'>): number | undefined {
  if (options.mutantNoGrantLimit && options.handoff !== 'timestamp') return Number.POSITIVE_INFINITY;
  switch (options.handoff) {
    case 'remote-prefer':
      return 0;
    case 'local-prefer':
      return 255;
    case 'local-bound':
      return options.localBound;
    default:
      return undefined;
  }
}

export interface HierarchicalOptions extends CqlOptions {
  /** Task-fair (default) or phase-fair handling of local readers and writers. */
  readonly policy: FairnessPolicy;
  /** Local handoff policy (Fig. 14); `timestamp` is DecLock's. */
  readonly handoff: HandoffPolicy;
  /** k of `local-bound`: local grants (handoffs and readers joining) per CQL ownership. */
  readonly localBound: number;
  /** Test-only mutant: local waiters wait for ever behind their node's hold (no reset of a crashed local holder's hold). */
  readonly mutantNoLocalRecovery: boolean;
  /**
   * Test-only mutant: a client whose verb fails (memory node down) while it waits locally or owns
   * the node's turn leaves without passing the turn on, so the local lock stays PENDING.
   */
  readonly mutantKeepTurnOnFailure: boolean;
  /** Test-only mutant: bounded handoff policies grant locally without counting (remote waiters starve). */
  readonly mutantNoGrantLimit: boolean;
  /** Clock sync period through the memory-node counter; 0 turns sync off (timestamps use the local origin). */
  readonly syncPeriodNs: number;
  /** CNs taking part in a sync round; 0 = the CNs that created declock clients in this process. */
  readonly syncNodes: number;
  /** How long a CN polls the sync counter before giving up on a round. */
  readonly syncTimeoutNs: number;
  /** Paper-literal: a reader arriving in SHARED state joins at once, without the remote-timestamp check. */
  readonly paperLiteralSharedAdmission: boolean;
  /** Test-only mutant: local handoffs ignore remote waiters' timestamps (Local-Prefer without bound). */
  readonly mutantIgnoreTimestamps: boolean;
  /** Test-only mutant: sharing among local readers also admits waiting writers. */
  readonly mutantShareWithWriters: boolean;
}

export const CQL_OPTION_HELP: Readonly<Record<string, string>> = {
  capacity: 'queue capacity C, a power of two (default: the largest that fits the lock entry)',
  acquireTimeoutNs: 'waiter timeout in ns that triggers a lock reset (default 10000000)',
  acquireTimeoutStaggerNs: 'extra timeout in ns per compute-node index (default 1000000)',
  suspectAfterNs: 'declare queue members failed when a reset has not drained for this many ns (default inf: never)',
  maxRefetch: 'refetches of obsolete entries before a reset (default 8192)',
  refetchTimeoutNs: 'longest a release refetches a not-yet-written entry before it resets, in ns (default 0: the waiter timeout; inf: maxRefetch only)',
  retryBackoffInitialNs: 'first backoff after an aborted acquire (default 2000)',
  retryBackoffMaxNs: 'backoff cap after aborted acquires (default 256000)',
  allowQueueOverflow: 'accept up to 2C-1 contenders (overflow resets) instead of refusing more than C',
  paperLiteralLazyOverflow: 'paper-literal: detect queue overflow only when a releaser finds an overwritten entry',
  mutantReaderGrant: 'test-only: readers skip waiting writers (broken on purpose)',
  mutantBatchPastWriters: 'test-only: a writer grants readers beyond the next writer (broken on purpose)',
  mutantIgnoreResetAcks: 'test-only: a reset past a dead node does not wait for the live nodes to acknowledge (broken on purpose)',
  mutantNoTableReset: 'test-only: compute nodes keep their lock state across a memory-node restart (broken on purpose)',
  mutantGrantFromLostFaa: 'test-only: an acquire FAA that completes after its table was lost still grants (broken on purpose)',
};

export const HIERARCHICAL_OPTION_HELP: Readonly<Record<string, string>> = {
  ...CQL_OPTION_HELP,
  policy: 'tf (task-fair, default) or pf (phase-fair) among a compute node’s clients',
  handoff: 'timestamp (default, DecLock), remote-prefer, local-prefer or local-bound: who gets the lock after a local holder (Fig. 14); the last three are phase-fair',
  localBound: 'k of handoff=local-bound: local grants per CQL ownership before remote waiters get a turn (default 4, as Sherman)',
  mutantNoGrantLimit: 'test-only: remote-prefer, local-prefer and local-bound grant locally without limit (broken on purpose)',
  mutantNoLocalRecovery: 'test-only: local waiters never reset a hold their node keeps for a crashed client (broken on purpose)',
  mutantKeepTurnOnFailure: 'test-only: a client whose verb fails while it waits locally or owns the node’s turn does not pass it on (broken on purpose)',
  syncPeriodNs: 'clock sync period in ns through the memory-node counter (default 1000000000; 0 = off)',
  syncNodes: 'compute nodes in a sync round (default 0: those with clients in this process)',
  syncTimeoutNs: 'longest poll of the sync counter, in ns (default 1000000)',
  paperLiteralSharedAdmission: 'paper-literal: readers join a SHARED lock without the remote-timestamp check',
  mutantIgnoreTimestamps: 'test-only: local handoff ignores remote waiters (broken fairness on purpose)',
  mutantShareWithWriters: 'test-only: local sharing admits writers (broken on purpose)',
};

function readCql(reader: OptionReader, entryBytes: number, spareWord: boolean): CqlOptions {
  const fitting = capacityFitting(entryBytes, spareWord);
  const capacity = reader.number('capacity', fitting, { min: 0, integer: true });
  if (capacity === 0) throw new ConfigError([`declock: a lock entry of ${entryBytes} bytes holds no queue of capacity ≥ 2`]);
  return {
    capacity,
    acquireTimeoutNs: reader.number('acquireTimeoutNs', 10_000_000, { min: 1_000 }),
    acquireTimeoutStaggerNs: reader.number('acquireTimeoutStaggerNs', 1_000_000, { min: 0 }),
    suspectAfterNs: reader.number('suspectAfterNs', Infinity, { min: 1_000 }),
    maxRefetch: reader.number('maxRefetch', 8192, { min: 1, integer: true }),
    refetchTimeoutNs: reader.number('refetchTimeoutNs', 0, { min: 0 }),
    retryBackoffInitialNs: reader.number('retryBackoffInitialNs', 2_000, { min: 1 }),
    retryBackoffMaxNs: reader.number('retryBackoffMaxNs', 256_000, { min: 1 }),
    allowQueueOverflow: reader.boolean('allowQueueOverflow', false),
    paperLiteralLazyOverflow: reader.boolean('paperLiteralLazyOverflow', false),
    mutantReaderGrant: reader.boolean('mutantReaderGrant', false),
    mutantBatchPastWriters: reader.boolean('mutantBatchPastWriters', false),
    mutantIgnoreResetAcks: reader.boolean('mutantIgnoreResetAcks', false),
    mutantNoTableReset: reader.boolean('mutantNoTableReset', false),
    mutantGrantFromLostFaa: reader.boolean('mutantGrantFromLostFaa', false),
  };
}

export function readCqlOptions(protocol: string, options: ProtocolOptions | undefined, entryBytes: number): CqlOptions {
  const reader = new OptionReader(protocol, options);
  const parsed = readCql(reader, entryBytes, false);
  reader.done();
  return parsed;
}

export function readHierarchicalOptions(protocol: string, options: ProtocolOptions | undefined, entryBytes: number): HierarchicalOptions {
  const reader = new OptionReader(protocol, options);
  const handoff = reader.choice('handoff', ['timestamp', 'remote-prefer', 'local-prefer', 'local-bound'] as const, 'timestamp');
  const parsed: HierarchicalOptions = {
    ...readCql(reader, entryBytes, true),
    // The paper runs every non-timestamp policy phase-fair.
    policy: reader.choice('policy', ['tf', 'pf'] as const, handoff === 'timestamp' ? 'tf' : 'pf'),
    handoff,
    localBound: reader.number('localBound', 4, { min: 1, integer: true }),
    mutantNoGrantLimit: reader.boolean('mutantNoGrantLimit', false),
    mutantKeepTurnOnFailure: reader.boolean('mutantKeepTurnOnFailure', false),
    mutantNoLocalRecovery: reader.boolean('mutantNoLocalRecovery', false),
    syncPeriodNs: reader.number('syncPeriodNs', 1_000_000_000, { min: 0 }),
    syncNodes: reader.number('syncNodes', 0, { min: 0, integer: true }),
    syncTimeoutNs: reader.number('syncTimeoutNs', 1_000_000, { min: 1_000 }),
    paperLiteralSharedAdmission: reader.boolean('paperLiteralSharedAdmission', false),
    mutantIgnoreTimestamps: reader.boolean('mutantIgnoreTimestamps', false),
    mutantShareWithWriters: reader.boolean('mutantShareWithWriters', false),
  };
  reader.done();
  const problems: string[] = [];
  if (handoff !== 'timestamp' && parsed.policy === 'tf') problems.push(`${protocol} option handoff=${handoff}: runs phase-fair (policy=pf), as in DecLock Fig. 14; policy=tf goes only with handoff=timestamp`);
  if (options?.['localBound'] !== undefined && handoff !== 'local-bound') problems.push(`${protocol} option localBound: only with handoff=local-bound`);
  if (problems.length > 0) throw new ConfigError(problems);
  return parsed;
}
