import { ConfigError } from '@lockfabric/ports';
import { validateTxnRunSpec } from './txn/types.js';
import type { TxnRunSpec } from './txn/types.js';
import { validateAppSpec } from './apps/types.js';
import type { AppSpec } from './apps/types.js';
import { validateHotspot } from './hotspot.js';
import { CS_DATA_REGION_BYTES } from './cs-data.js';
import type { HotspotSpec } from './hotspot.js';

/**
 * How lock ids are drawn: uniformly, or Zipfian with exponent θ (`zipf`: 0.99 is YCSB's default).
 * `scrambled` spreads the hot ranks over the id space (YCSB's "scrambled zipfian"); otherwise
 * rank r is lock r, so lock 0 is the hottest.
 */
export type Distribution = 'uniform' | { readonly zipf: number; readonly scrambled?: boolean };

/**
 * How a drawn lock index (0 … locks-1) becomes the lock id a client asks for: `dense` uses the
 * index itself; `sparse` spreads the indexes over [0, 2^32) with a fixed bijection
 * ({@link sparseLockId}), like application ids a protocol must map to dense indexes (FissLock's
 * `lockIds=mapped`). Only protocols that accept any lock id can run sparse workloads.
 */
export type LockIdSpace = 'dense' | 'sparse';
export const LOCK_ID_SPACES: readonly LockIdSpace[] = ['dense', 'sparse'];

/** A workload as data: the same spec drives tests, simulations and benchmarks. */
export interface WorkloadSpec {
  /** Lock clients (tasks) in the whole run. */
  readonly clients: number;
  /** Lock indexes are 0 … locks-1 (the lock ids themselves unless `lockIds` is `sparse`). */
  readonly locks: number;
  /** `dense` when absent. */
  readonly lockIds?: LockIdSpace;
  /** Fraction of acquires in shared mode, 0..1. */
  readonly readRatio: number;
  readonly distribution: Distribution;
  /** Run length; a run stops at whichever of durationMs and operations comes first. */
  readonly durationMs?: number;
  /** Total acquires over all clients. */
  readonly operations?: number;
  /** Pause between a release and the next acquire of one client. */
  readonly thinkNs: number;
  /** Time a lock is held (after the critical section's data verbs, if any). */
  readonly criticalSectionNs: number;
  /** Data verbs in the critical section on the guarded object: READ when shared, WRITE when exclusive (see cs-data.ts). */
  readonly csVerbs?: number;
  /** Bytes each of those verbs moves (default 64). */
  readonly csVerbBytes?: number;
  readonly seed: number;
  /** Acquire timeout passed to the lock client; none when absent. */
  readonly timeoutMs?: number;
  /**
   * A transactional run (libs/workloads/src/txn): clients run strict-2PL transactions instead of
   * single-lock operations; `operations` counts transactions and `readRatio`/`distribution` are unused.
   */
  readonly transactions?: TxnRunSpec;
  /**
   * An application run (libs/workloads/src/apps): DecLock's object store or B+tree over data on
   * the memory nodes. `locks` is then the number of objects or tree node slots, `operations`
   * counts application operations, `distribution` picks objects or keys; `readRatio` is unused.
   */
  readonly application?: AppSpec;
  /** FissLock's dynamic workload: a moving block of hot locks takes a share of the requests (micro loop only). */
  readonly hotspot?: HotspotSpec;
}

const DEFAULT_ZIPF_THETA = 0.99;

/**
 * Parses `uniform`, `zipf` (θ = 0.99), `zipf:<θ>`, and `zipf:<θ>:scrambled` (or `scrambled-zipf:<θ>`).
 * Throws {@link ConfigError} naming the text when it is none of these.
 */
export function parseDistribution(text: string): Distribution {
  const value = text.trim().toLowerCase();
  if (value === 'uniform') return 'uniform';
  const match = /^(scrambled-)?zipf(?::([^:]+))?(:scrambled)?$/.exec(value);
  if (match) {
    const theta = match[2] === undefined ? DEFAULT_ZIPF_THETA : Number(match[2]);
    if (match[2] !== undefined && (match[2].trim() === '' || !Number.isFinite(theta) || theta < 0)) {
      throw new ConfigError([`distribution "${text}": zipf θ must be a number ≥ 0, e.g. "zipf:0.99"`]);
    }
    const scrambled = match[1] !== undefined || match[3] !== undefined;
    return scrambled ? { zipf: theta, scrambled: true } : { zipf: theta };
  }
  throw new ConfigError([`distribution "${text}" is not "uniform", "zipf:<θ>" or "zipf:<θ>:scrambled"`]);
}

/** Parses `dense` or `sparse`; throws {@link ConfigError} naming the text otherwise. */
export function parseLockIdSpace(text: string): LockIdSpace {
  const value = text.trim().toLowerCase();
  if (value === 'dense' || value === 'sparse') return value;
  throw new ConfigError([`lock ids "${text}" are not "dense" or "sparse"`]);
}

/** Inverse of {@link parseDistribution}. */
export function formatDistribution(distribution: Distribution): string {
  if (distribution === 'uniform') return 'uniform';
  return `zipf:${distribution.zipf}${distribution.scrambled ? ':scrambled' : ''}`;
}

/** Every problem with the spec, in words a user acts on; empty when the spec is valid. */
export function validateWorkloadSpec(spec: WorkloadSpec): string[] {
  const problems: string[] = [];
  const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);
  const isNum = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
  if (!isInt(spec.clients) || spec.clients < 1) problems.push(`clients must be a whole number ≥ 1 (got ${String(spec.clients)})`);
  if (!isInt(spec.locks) || spec.locks < 1) problems.push(`locks must be a whole number ≥ 1 (got ${String(spec.locks)})`);
  else if (spec.locks > 0xffff_ffff) problems.push(`locks must be at most ${0xffff_ffff} (got ${spec.locks})`);
  if (!isNum(spec.readRatio) || spec.readRatio < 0 || spec.readRatio > 1) {
    problems.push(`readRatio must be between 0 and 1 (got ${String(spec.readRatio)})`);
  }
  const distribution = spec.distribution as unknown;
  if (distribution !== 'uniform') {
    const zipf = typeof distribution === 'object' && distribution !== null ? (distribution as { zipf?: unknown }).zipf : undefined;
    if (zipf === undefined) problems.push(`distribution must be "uniform" or { zipf: θ } (got ${JSON.stringify(distribution)})`);
    else if (!isNum(zipf) || zipf < 0) problems.push(`distribution zipf θ must be a number ≥ 0 (got ${String(zipf)})`);
  }
  if (spec.lockIds !== undefined && !LOCK_ID_SPACES.includes(spec.lockIds)) problems.push(`lockIds must be "dense" or "sparse" (got ${JSON.stringify(spec.lockIds)})`);
  if (spec.durationMs !== undefined && (!isNum(spec.durationMs) || spec.durationMs <= 0)) {
    problems.push(`durationMs must be a number > 0 when given (got ${String(spec.durationMs)})`);
  }
  if (spec.operations !== undefined && (!isInt(spec.operations) || spec.operations < 1)) {
    problems.push(`operations must be a whole number ≥ 1 when given (got ${String(spec.operations)})`);
  }
  if (spec.durationMs === undefined && spec.operations === undefined) problems.push('give durationMs or operations (or both), or the run never ends');
  if (!isNum(spec.thinkNs) || spec.thinkNs < 0) problems.push(`thinkNs must be a number ≥ 0 (got ${String(spec.thinkNs)})`);
  if (!isNum(spec.criticalSectionNs) || spec.criticalSectionNs < 0) {
    problems.push(`criticalSectionNs must be a number ≥ 0 (got ${String(spec.criticalSectionNs)})`);
  }
  if (spec.csVerbs !== undefined && (!isInt(spec.csVerbs) || spec.csVerbs < 0)) problems.push(`csVerbs must be a whole number ≥ 0 (got ${String(spec.csVerbs)})`);
  if (spec.csVerbBytes !== undefined && (!isInt(spec.csVerbBytes) || spec.csVerbBytes < 1 || spec.csVerbBytes > CS_DATA_REGION_BYTES)) problems.push(`csVerbBytes must be a whole number from 1 to ${CS_DATA_REGION_BYTES} (got ${String(spec.csVerbBytes)})`);
  if ((spec.csVerbs ?? 0) > 0 && (spec.transactions !== undefined || spec.application !== undefined)) problems.push('csVerbs applies to the single-lock workload (micro or dynamic)');
  if (!isInt(spec.seed)) problems.push(`seed must be a whole number (got ${String(spec.seed)})`);
  if (spec.timeoutMs !== undefined && (!isNum(spec.timeoutMs) || spec.timeoutMs <= 0)) {
    problems.push(`timeoutMs must be a number > 0 when given (got ${String(spec.timeoutMs)})`);
  }
  if (spec.transactions !== undefined) problems.push(...validateTxnRunSpec(spec.transactions, isInt(spec.locks) ? spec.locks : undefined));
  if (spec.hotspot !== undefined) problems.push(...validateHotspot(spec.hotspot, spec.locks));
  if (spec.application !== undefined) {
    problems.push(...validateAppSpec(spec.application));
    if (spec.transactions !== undefined) problems.push('a run is transactional or an application, not both');
    if (spec.application.kind === 'objectstore' && spec.locks !== spec.application.objects) problems.push(`an object-store run has one lock per object: locks ${spec.locks} ≠ objects ${spec.application.objects}`);
  }
  return problems;
}

/** Throws {@link ConfigError} listing every problem of an invalid spec. */
export function assertValidWorkloadSpec(spec: WorkloadSpec): void {
  const problems = validateWorkloadSpec(spec);
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `workload: ${p}`));
}

/**
 * Share of `spec.operations` for client number `clientIndex` (0-based): the total split as evenly
 * as possible, the first clients taking one more. Unbounded when the spec gives no total.
 */
export function opsBudgetFor(spec: Pick<WorkloadSpec, 'operations' | 'clients'>, clientIndex: number): number {
  if (spec.operations === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isInteger(clientIndex) || clientIndex < 0 || clientIndex >= spec.clients) {
    throw new RangeError(`client index ${clientIndex} is outside 0..${spec.clients - 1}`);
  }
  const base = Math.floor(spec.operations / spec.clients);
  return base + (clientIndex < spec.operations % spec.clients ? 1 : 0);
}
