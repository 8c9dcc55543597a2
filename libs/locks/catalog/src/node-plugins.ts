import { caslock, caslockWordAfterDeath } from '@lockfabric/lock-caslock';
import { drtm, drtmWordAfterDeath } from '@lockfabric/lock-drtm';
import { WordLayout, drainDslrLock, dslr, formatCounters, readDslrOptions, resetDslrTable } from '@lockfabric/lock-dslr';
import { dslrBackoff } from '@lockfabric/lock-dslr-backoff';
import type { Clock, LockId, LockTableLayout, NodeId, Verbs } from '@lockfabric/ports';

/**
 * Per-protocol pieces the memory node and the coordinator's LockAdmin run without naming the
 * protocol: they look the table's protocol up here.
 */

/** What a protocol's 8-byte lock word becomes once `deadNode` is fenced; undefined leaves it. */
export type WordAfterDeath = (word: bigint, deadNode: NodeId) => bigint | undefined;

/**
 * Protocols whose dead holders the memory node clears itself, because the word names the holder's
 * machine and the design has no lease for it. The others recover by lease, by their own services,
 * or by the coordinator's recovery plug-ins.
 */
const WORD_RECOVERY: ReadonlyMap<string, WordAfterDeath> = new Map([
  [caslock.id, caslockWordAfterDeath],
  [drtm.id, drtmWordAfterDeath],
]);

/** The memory node's rule for `protocol`'s words after a holder's death, if it has one. */
export function wordAfterDeath(protocol: string): WordAfterDeath | undefined {
  return WORD_RECOVERY.get(protocol);
}

export interface TableResetResult {
  readonly locks: number;
  readonly nonZeroBefore: number;
  readonly conservationViolations: readonly { readonly lock: LockId; readonly counters: string }[];
  readonly notZeroAfter: readonly LockId[];
}

export interface LockDrainResult {
  readonly outcome: string;
  readonly elapsedNs: number;
  /** The lock word's counters before the drain, as the protocol prints them. */
  readonly before: string;
  readonly verbs: number;
}

type Options = Readonly<Record<string, string | number | boolean>>;

/** A protocol's planned table maintenance, run by the coordinator over its own queue pairs. */
export interface TableAdmin {
  readonly entryBytes: number;
  /** Throws a ConfigError (or RangeError) naming what is wrong with the table's options. */
  checkOptions(options: Options): void;
  reset(verbs: Verbs, table: LockTableLayout, options: Options): Promise<TableResetResult>;
  drain(verbs: Verbs, table: LockTableLayout, lock: LockId, options: { readonly clock: Clock; readonly protocolOptions: Options; readonly timeoutMs: number }): Promise<LockDrainResult>;
}

/** DSLR's whole-table reset between runs and freeze-and-drain of one hot lock (DSLR §4.9). */
const dslrAdmin: TableAdmin = {
  entryBytes: dslr.entryBytes,
  checkOptions: (options) => void readDslrOptions(options),
  reset: async (verbs, table, options) => {
    const report = await resetDslrTable(verbs, table, { layout: readDslrOptions(options).layout });
    return { ...report, conservationViolations: report.conservationViolations.map((v) => ({ lock: v.lock, counters: v.counters })) };
  },
  drain: async (verbs, table, lock, options) => {
    const report = await drainDslrLock(verbs, table, lock, options);
    const parsed = readDslrOptions(options.protocolOptions);
    return { outcome: report.outcome, elapsedNs: report.elapsedNs, verbs: report.verbs, before: formatCounters(report.before, WordLayout.of(parsed.layout, parsed.counterLimit)) };
  },
};

const TABLE_ADMIN: ReadonlyMap<string, TableAdmin> = new Map([
  [dslr.id, dslrAdmin],
  [dslrBackoff.id, dslrAdmin],
]);

/** The coordinator's table maintenance for `protocol`, if it has one (`tableResetProtocolIds`). */
export function tableAdmin(protocol: string): TableAdmin | undefined {
  return TABLE_ADMIN.get(protocol);
}
