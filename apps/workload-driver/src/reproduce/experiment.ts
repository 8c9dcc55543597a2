// How a paper's experiment is written down: the sweep, the systems compared, what is measured and
// the claims read off the result. Papers' modules (papers/*.ts) are tables of these.
import type { CostModel } from '@lockfabric/fabric';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { TxnRunSpec, WorkloadSpec } from '@lockfabric/workloads';
import type { AxisSpec, PaperId, Series } from './contract.js';
import type { ClaimKind } from './verdict.js';

/** Run size: `full` the paper's parameters, `quick` fewer points and operations, `smoke` what tests use. */
export type Scale = 'full' | 'quick' | 'smoke';

/**
 * The lock-manager CPU model of FissLock §7.1's resource fairness: every packet a lock-manager role
 * handles costs `packetNs` of one of its machine's cores. `server`: requests addressed to a
 * machine are its work (SrvLock, NetLock's server, ParLock's managers); `agent`: everything but
 * GRANTs, ACKs and agent transfers (FissLock's agent pools; a GRANT goes to the client's core).
 */
export interface LockManagerCpuPlan {
  readonly packetNs: number;
  readonly coresServer: number;
  readonly coresNode: number;
  readonly work: 'server' | 'agent';
}

/** One simulated run: everything a worker thread needs, plain data. */
export interface PointJob {
  readonly protocol: string;
  readonly options: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly computeNodes: number;
  readonly memoryNodes: number;
  /** Clients on memory node 0 itself (ALock's local class). */
  readonly colocatedClients?: number;
  /** The lowest compute node is a dedicated lock server and runs no clients (SrvLock, NetLock). */
  readonly dedicatedServer?: boolean;
  readonly lockManagerCpu?: LockManagerCpuPlan;
  readonly switchLinks?: 'fifo' | 'jittered';
  /**
   * Not a workload run: time one FissLock recovery (S1–S3) over `heldLocks` held locks on
   * `machines` machines in this thread, and report `phase` as `recoveryMs` (FissLock Fig. 17 middle).
   */
  readonly recovery?: { readonly heldLocks: number; readonly machines: number; readonly phase: RecoveryPhase };
  /** The run's hardware (plain data, so it crosses to worker threads); see ReproducePlan.costModel. */
  readonly costModel?: CostModel;
}

export type RecoveryPhase = 'S1' | 'S2' | 'S3';

/** What one run measured; an experiment's y is one of these. */
export interface Measure {
  readonly goodputMops: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly p999Us: number;
  readonly meanUs: number;
  readonly grantP50Us: number;
  readonly grantP90Us: number;
  /** Mean µs of a writer acquire's first atomic, and of the rest of it (ShiftLock Table 4: IA, and NP+WP+WR or RT); NaN when unmarked. */
  readonly writerIaUs: number;
  readonly writerWaitUs: number;
  readonly verbsPerOp: number;
  /** Verbs of the acquire phase alone per acquire (DecLock Fig. 3: 1 + retries or polls). */
  readonly verbsPerAcquire: number;
  /** The busiest memory node NIC's use of its inbound ceiling, in % (NaN on a model without one). */
  readonly mnNicCeilingPct: number;
  readonly committedKtps: number;
  /** One recovery step's real time (recovery jobs only; NaN otherwise). */
  readonly recoveryMs: number;
  readonly acquires: number;
  readonly failures: number;
  readonly checkerOk: boolean;
  readonly wallMs: number;
}

export type MeasureField = Exclude<keyof Measure, 'checkerOk'>;

/** One system of an experiment: a protocol with options, plotted under `name`. */
export interface SeriesDef {
  readonly name: string;
  readonly protocol: string;
  readonly options?: ProtocolOptions;
  /** Placement and CPU model of this system (switch family). */
  readonly dedicatedServer?: boolean;
  readonly lockManagerCpu?: LockManagerCpuPlan;
}

/** Reads our measured series: the y of `series` at `x` (NaN when absent). */
export type Lookup = (series: string, x: number) => number;

export interface ClaimDef {
  readonly id: string;
  readonly text: string;
  readonly kind: ClaimKind;
  /** The paper's number: a ratio for `ratio`, a percentage for `reduction`. */
  readonly paper: number;
  /** Series the claim reads; when one is missing from this build the claim is left out. */
  readonly uses: readonly string[];
  readonly ours: (y: Lookup, xs: readonly number[]) => number;
  /** The mechanism we believe when ours is off (not reproduced); shown only then. */
  readonly note?: string;
}

export interface ExperimentDef {
  readonly id: string;
  readonly paper: PaperId;
  readonly figure: string;
  readonly title: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly x: AxisSpec;
  readonly y: AxisSpec & { readonly field: MeasureField };
  readonly xs: Readonly<Record<Scale, readonly number[]>>;
  readonly series: readonly SeriesDef[];
  readonly paperSeries?: readonly Series[];
  readonly claims: readonly ClaimDef[];
  /** The run of one system at one x. */
  readonly job: (series: SeriesDef, x: number, scale: Scale) => PointJob;
}

export interface PaperDef {
  readonly paper: PaperId;
  readonly title: string;
  readonly experiments: readonly ExperimentDef[];
}

/** A micro workload spec with the defaults every experiment shares. */
export function micro(spec: Partial<WorkloadSpec> & Pick<WorkloadSpec, 'clients' | 'locks' | 'readRatio' | 'distribution' | 'operations'>): WorkloadSpec {
  return { thinkNs: 0, criticalSectionNs: 0, seed: 7, ...spec };
}

/** A transactional spec: the lock count comes from the population (filled in by the runner). */
export function transactional(clients: number, operations: number, txn: Omit<TxnRunSpec, 'seed'>, seed = 7): WorkloadSpec {
  return { clients, locks: 1, readRatio: 0, distribution: 'uniform', operations, thinkNs: 0, criticalSectionNs: 0, seed, timeoutMs: 10, transactions: { ...txn, seed } };
}

/** A job for one series: its protocol, options and placement over a base. */
export function jobOf(series: SeriesDef, base: Omit<PointJob, 'protocol' | 'options'>): PointJob {
  return {
    ...base,
    protocol: series.protocol,
    options: { ...series.options },
    ...(series.dedicatedServer ? { dedicatedServer: true } : {}),
    ...(series.lockManagerCpu ? { lockManagerCpu: series.lockManagerCpu } : {}),
  };
}

// Claim readers. `a/b` ratios are ours-over-baseline, as the papers state them. `at` names a point
// of the sweep, or its first or last point, so one claim reads the same point at every scale.

export type At = number | 'first' | 'last';
const pick = (at: At, xs: readonly number[]): number => (at === 'first' ? xs[0]! : at === 'last' ? xs[xs.length - 1]! : at);

/** y(a)/y(b) at one point. */
export const ratioAt = (a: string, b: string, at: At) => (y: Lookup, xs: readonly number[]) => y(a, pick(at, xs)) / y(b, pick(at, xs));
/** The largest y(a) over the sweep against y(a) at one point: how far a series falls from its peak. */
export const peakOver = (a: string, at: At) => (y: Lookup, xs: readonly number[]) => Math.max(...xs.map((x) => y(a, x))) / y(a, pick(at, xs));
/** y(a) at one point, as it is (a percentage claim). */
export const valueAt = (a: string, at: At) => (y: Lookup, xs: readonly number[]) => y(a, pick(at, xs));
/** The largest y(a)/y(b) over the sweep ("up to"). */
export const maxRatio = (a: string, b: string) => (y: Lookup, xs: readonly number[]) => Math.max(...xs.map((x) => y(a, x) / y(b, x)));
/** y(b)/y(a) at one point: how many times lower a is (latency). */
export const lowerAt = (a: string, b: string, at: At) => (y: Lookup, xs: readonly number[]) => y(b, pick(at, xs)) / y(a, pick(at, xs));
/** The largest y(b)/y(a) over the sweep. */
export const maxLower = (a: string, b: string) => (y: Lookup, xs: readonly number[]) => Math.max(...xs.map((x) => y(b, x) / y(a, x)));
/** The reduction of a against b at one point, in % (1 − a/b). */
export const reductionAt = (a: string, b: string, at: At) => (y: Lookup, xs: readonly number[]) => 100 * (1 - y(a, pick(at, xs)) / y(b, pick(at, xs)));
/** The largest reduction of a against b over the sweep, in %. */
export const maxReduction = (a: string, b: string) => (y: Lookup, xs: readonly number[]) => Math.max(...xs.map((x) => 100 * (1 - y(a, x) / y(b, x))));
