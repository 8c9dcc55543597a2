import { clientKey } from '@lockfabric/ports';
import type { ClientPorts, Clock, Grant, LockClient } from '@lockfabric/ports';
import type { HistoryRecorder } from '@lockfabric/check';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { RunStats } from './results.js';
import { opsBudgetFor, type WorkloadSpec } from './spec.js';
import { runClientLoop, stopAfter, type ClientLoopResult } from './runner.js';
import type { VerbAccounting, VerbPhase } from './verb-accounting.js';
import { pausablePorts, pauseApplies, type PauseSpec } from './pause-injection.js';
import { runTxnClients } from './txn/runner.js';
import type { TxnLogEntry } from './txn/log.js';
import type { TxnData } from './txn/runner.js';
import { driftingPorts } from './clock-drift.js';
import { runAppClients } from './apps/runner.js';
import { skippingReleases } from './skip-release.js';
import type { AppRunLog } from './apps/runner.js';
import type { DataRegions } from './apps/types.js';
import { DEFAULT_CS_VERB_BYTES, runCsDataVerbs } from './cs-data.js';
import type { CsData } from './cs-data.js';
import type { ClockDrift } from './clock-drift.js';

export interface RunClientsOptions {
  readonly protocol: ProtocolDefinition;
  readonly protocolOptions?: ProtocolOptions;
  readonly spec: WorkloadSpec;
  /** One entry per client of this process. */
  readonly ports: readonly ClientPorts[];
  readonly recorder: HistoryRecorder;
  readonly stats: RunStats;
  readonly clock: Clock;
  /**
   * Fault: probability that a client crashes instead of releasing, per release. A crashed client
   * stops forever while holding its lock, like a process killed in its critical section.
   */
  readonly crashProbability?: number;
  /** Fault: clients that stop taking steps for a while (SIGSTOP-like), counted from the run's start. */
  readonly pauses?: readonly PauseSpec[];
  /** How long a posted verb stays in a paused process before it leaves (default 20 µs); see `pausablePorts`. */
  readonly pauseSendLagNs?: number;
  readonly signal?: AbortSignal;
  /** Counts each client's verbs by the phase (acquire or release) that issued them. */
  readonly accounting?: VerbAccounting;
  /** Transactional runs: receives each committed transaction (the transaction log, as it happens). */
  readonly onTxnCommit?: (entry: TxnLogEntry) => void;
  /** Transactional runs: the data verbs each transaction runs with its locks held (SmallBank). */
  readonly txnData?: TxnData;
  /** Fault: the clock each client's protocol code reads, per node (histories keep true time). */
  readonly clockDrift?: (node: number) => ClockDrift | undefined;
  /** Fault: probability that a client skips a release and carries on (ShiftLock Fig. 13); single-lock loop. */
  readonly skipReleaseProbability?: number;
  /** Application runs: the data region of every memory node (see apps/types.ts). */
  readonly dataRegions?: DataRegions;
  /** Application runs: collects what the clients did, for the run's checks and figures. */
  readonly appLog?: AppRunLog;
  /** Micro runs with `spec.csVerbs`: the data regions the critical sections' verbs go to (see cs-data.ts). */
  readonly csDataRegions?: DataRegions;
}

export interface RunClientsResult {
  readonly startNs: number;
  readonly endNs: number;
  readonly loops: readonly ClientLoopResult[];
  /** Clients that crashed, with the time they did. */
  readonly crashed: ReadonlyMap<string, number>;
}

const DEFAULT_PAUSE_SEND_LAG_NS = 20_000;

/**
 * Runs the workload loop of every client of one process with the given protocol, on whatever
 * substrate built the ports. Resolves when every live client is done (crashed ones are left behind).
 */
export async function runClients(options: RunClientsOptions): Promise<RunClientsResult> {
  // Transactional workloads (strict 2PL over several locks) have their own loop.
  if (options.spec.transactions) return runTxnClients(options);
  // Application workloads (object store, B+tree) do data verbs between their lock steps.
  if (options.spec.application) return runAppClients(options);
  const { protocol, spec, clock } = options;
  const startNs = clock.nowNs();
  const shouldStop = stopAfter(clock, spec.durationMs);
  const crashed = new Map<string, number>();
  const csVerbs = spec.csVerbs ?? 0;
  if (csVerbs > 0 && !options.csDataRegions) throw new RangeError('csVerbs needs the data regions of the memory nodes (csDataRegions)');
  const csData: CsData | undefined = csVerbs > 0 ? { verbs: csVerbs, bytes: spec.csVerbBytes ?? DEFAULT_CS_VERB_BYTES, regions: options.csDataRegions! } : undefined;
  const loops = options.ports.map((original, index) => {
    const windows = (options.pauses ?? []).filter((p) => pauseApplies(p, original.self)).map((p) => ({ fromNs: startNs + p.atNs, toNs: startNs + p.atNs + p.durationNs }));
    let ports = pausablePorts(original, windows, options.pauseSendLagNs ?? DEFAULT_PAUSE_SEND_LAG_NS);
    let phase: VerbPhase | undefined;
    if (options.accounting) ports = { ...ports, verbs: options.accounting.wrapVerbs(ports.verbs, () => phase) };
    const drift = options.clockDrift?.(original.self.node);
    const timing = options.accounting?.phases.forClient<Grant>(ports.clock);
    if (timing) ports = { ...ports, phases: timing.marks };
    let client: LockClient<Grant> = protocol.createClient(drift ? driftingPorts(ports, drift) : ports, options.protocolOptions);
    // One wrapper for both: verb phase and phase timing settle in the same reaction.
    if (options.accounting) client = options.accounting.wrapClient(client, (next) => (phase = next), timing?.hooks);
    if (options.skipReleaseProbability && options.skipReleaseProbability > 0) client = skippingReleases(client, ports.random, options.skipReleaseProbability);
    let crashedSignal: Promise<'crashed'> | undefined;
    if (options.crashProbability && options.crashProbability > 0) {
      const crashing = crashingClient(client, ports, options.crashProbability, (timeNs) => crashed.set(clientKey(ports.self), timeNs));
      client = crashing.client;
      crashedSignal = crashing.crashed;
    }
    const verbs = ports.verbs;
    const criticalSection = csData
      ? async (grant: Grant) => {
          phase = 'cs';
          try {
            await runCsDataVerbs(csData, verbs, ports.locks, grant);
          } finally {
            phase = undefined;
          }
        }
      : undefined;
    const loop = runClientLoop({
      client,
      ports,
      ...(criticalSection ? { criticalSection } : {}),
      spec,
      recorder: options.recorder,
      stats: options.stats,
      shouldStop,
      opsBudget: opsBudgetFor(spec, index),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return crashedSignal ? Promise.race([loop, crashedSignal]) : loop;
  });
  const settled = await Promise.all(loops);
  return {
    startNs,
    endNs: clock.nowNs(),
    loops: settled.filter((r): r is ClientLoopResult => r !== 'crashed'),
    crashed,
  };
}

function crashingClient(
  inner: LockClient<Grant>,
  ports: ClientPorts,
  probability: number,
  onCrash: (timeNs: number) => void,
): { client: LockClient<Grant>; crashed: Promise<'crashed'> } {
  let announce: (value: 'crashed') => void = () => undefined;
  const crashed = new Promise<'crashed'>((resolve) => (announce = resolve));
  const client: LockClient<Grant> = {
    acquire: (lock, mode, acquireOptions) => inner.acquire(lock, mode, acquireOptions),
    release: (grant) => {
      if (ports.random.next() < probability) {
        onCrash(ports.clock.nowNs());
        announce('crashed');
        return new Promise<void>(() => undefined);
      }
      return inner.release(grant);
    },
  };
  return { client, crashed };
}
