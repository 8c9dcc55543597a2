// Pause sweeps of lease-based protocols: the DSLR family (options leaseNs, waitUnitNs, restartOnAbort,
// backoffCapNs) and ShiftLock (leaseNs), shared by their tests.
import { HistoryRecorder, LEASE_EXPIRED, checkHistory, clipExpiredLeases, summarizeVerdict } from '@lockfabric/check';
import type { HistoryEvent, Verdict } from '@lockfabric/check';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { NS_PER_MS } from '@lockfabric/ports';
import { SeededRandom, createSimCluster } from '@lockfabric/sim';
import { RunStats, runClients } from '@lockfabric/workloads';
import type { PauseSpec, WorkloadSpec } from '@lockfabric/workloads';

/** One seed of the pause sweep: a workload on two compute nodes, one of which is paused now and then. */
export interface PauseCase {
  readonly seed: number;
  readonly spec: WorkloadSpec;
  readonly options: ProtocolOptions;
  readonly pauses: readonly PauseSpec[];
  /** How long a posted verb stays in its process before it leaves: a pause starting meanwhile holds it. */
  readonly sendLagNs?: number;
}

export interface PauseFindings {
  readonly problems: string[];
  readonly verdict: Verdict;
  readonly history: readonly HistoryEvent[];
  /** Holds of a paused client granted before a pause and released after it. */
  readonly spanning: number;
  /** Of those, releases fenced with LeaseExpiredError. */
  readonly fenced: number;
}

const LEASE_MS = 0.2;
const PAUSED_NODE = 2;

/** What a pause sweep is sized by: the protocol's stall threshold and its options at λ = 200 µs. */
export interface PauseShape {
  /** Waiters presume a failure after this many leases without progress (DSLR 2λ, ShiftLock 3λ). */
  readonly stallLeases: number;
  /** The protocol's options for a lease of `leaseMs` (ms), before `base` is applied. */
  readonly options: (leaseMs: number) => ProtocolOptions;
}

/** DSLR and DSLR-backoff: 2λ stall threshold, ω = 2 µs, waiters restart after an abort. */
export const DSLR_PAUSE_SHAPE: PauseShape = {
  stallLeases: 2,
  options: (leaseMs) => ({ leaseNs: leaseMs * NS_PER_MS, waitUnitNs: 2_000, restartOnAbort: true, backoffCapNs: 100_000 }),
};

/** ShiftLock: RelCnt standing still for 3·T_lease starts a recovery (ShiftLock §4). */
export const SHIFTLOCK_PAUSE_SHAPE: PauseShape = { stallLeases: 3, options: (leaseMs) => ({ leaseNs: leaseMs * NS_PER_MS }) };

/**
 * Scaled-down copy of the live SIGSTOP test: λ = 200 µs, critical sections a fraction of λ,
 * compute node 2 paused for 0.5–2λ past the stall threshold a few times per run.
 */
export function pauseCase(seed: number, base: ProtocolOptions = {}, shape: PauseShape = DSLR_PAUSE_SHAPE): PauseCase {
  const r = new SeededRandom(seed * 104_729 + 3);
  const leaseNs = LEASE_MS * NS_PER_MS;
  const spec: WorkloadSpec = {
    clients: 4 + r.int(6),
    locks: 1 + r.int(2),
    readRatio: [0.3, 0.5, 0.7][r.int(3)]!,
    distribution: 'uniform',
    durationMs: 6,
    thinkNs: r.int(2_000),
    criticalSectionNs: Math.round(leaseNs * (0.05 + r.next() * 0.3)),
    seed,
    timeoutMs: 3,
  };
  const pauses: PauseSpec[] = [];
  let atNs = Math.round(leaseNs * (1 + r.next() * 2));
  while (atNs < 5 * NS_PER_MS) {
    const durationNs = Math.round(leaseNs * (shape.stallLeases + 0.5 + r.next() * 1.5));
    pauses.push({ node: PAUSED_NODE, atNs, durationNs });
    atNs += durationNs + Math.round(leaseNs * (1 + r.next() * 3));
  }
  return { seed, spec, options: { ...shape.options(LEASE_MS), ...base }, pauses };
}

/**
 * Runs a pause case on `sim` and judges it as the live test does: holds whose release failed with
 * LeaseExpiredError count for nothing (clipExpiredLeases with 0), every other hold counts in full.
 */
export async function runPauseCase(protocol: ProtocolDefinition, c: PauseCase): Promise<PauseFindings> {
  const { cluster, scheduler } = createSimCluster({ seed: c.seed, lockCount: c.spec.locks, entryBytes: protocol.entryBytes, computeNodes: 2, memoryNodes: 1 });
  const ports = Array.from({ length: c.spec.clients }, (_, i) => cluster.clientPorts({ node: cluster.computeNodeIds[i % 2]!, client: i }));
  const recorder = new HistoryRecorder();
  const startNs = cluster.clock.nowNs();
  let finished = false;
  const run = runClients({ protocol, protocolOptions: c.options, spec: c.spec, ports, recorder, stats: new RunStats(), clock: cluster.clock, pauses: c.pauses, ...(c.sendLagNs !== undefined ? { pauseSendLagNs: c.sendLagNs } : {}) }).finally(() => {
    finished = true;
  });
  await scheduler.run({ untilNs: startNs + 200 * NS_PER_MS, stop: () => finished });
  const problems: string[] = [];
  if (!finished) problems.push('run cut off with operations pending');
  else await run;
  const history = [...recorder.events()];
  const verdict = checkHistory(clipExpiredLeases(history, 0));
  if (verdict.exclusion.violationCount > 0) problems.push(`exclusion: ${summarizeVerdict(verdict, 2)}`);
  const broken = history.filter((e) => e.op === 'release' && e.error === 'LeaseBrokenError').length;
  if (broken > 0) problems.push(`lease broken: ${broken} releases found their ticket skipped inside the lease`);
  const untyped = history.filter((e) => e.op === 'acquire' && e.phase === 'fail' && !['LockAbortedError', 'LockTimeoutError'].includes(e.error ?? ''));
  if (untyped.length > 0) problems.push(`untyped acquire failures: ${[...new Set(untyped.map((e) => e.error))].join(', ')}`);
  const windows = c.pauses.map((p) => ({ fromNs: startNs + p.atNs, toNs: startNs + p.atNs + p.durationNs }));
  let spanning = 0;
  let fenced = 0;
  const grantedAt = new Map<string, number>();
  const releasingAt = new Map<string, number>();
  for (const e of history) {
    if (!e.client.startsWith(`${PAUSED_NODE}/`)) continue;
    if (e.op === 'acquire' && e.phase === 'ok') grantedAt.set(e.client, e.timeNs);
    if (e.op === 'release' && e.phase === 'invoke') releasingAt.set(e.client, e.timeNs);
    if (e.op !== 'release' || e.phase === 'invoke') continue;
    const okNs = grantedAt.get(e.client);
    const invokeNs = releasingAt.get(e.client);
    if (okNs === undefined || invokeNs === undefined || !windows.some((w) => okNs < w.fromNs && invokeNs >= w.toNs)) continue;
    spanning++;
    if (e.error === LEASE_EXPIRED) fenced++;
  }
  return { problems, verdict, history, spanning, fenced };
}
