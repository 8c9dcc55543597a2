import { HistoryRecorder, checkHistory, clipExpiredLeases, historyDigest } from '@lockfabric/check';
import type { Verdict } from '@lockfabric/check';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { FaultSpec } from '@lockfabric/switch';
import { buildSwitchProgram } from './switch-programs.js';
import { FailureHub, severablePorts } from './node-failure.js';
import type { NodeFailureOutcome, NodeFailureSpec } from './node-failure.js';
import { NS_PER_MS } from '@lockfabric/ports';
import { clientKey } from '@lockfabric/ports';
import type { ClientAddress, Trace } from '@lockfabric/ports';
import { createEmbeddedCluster, createSimCluster } from '@lockfabric/sim';
import type { InMemoryCluster, InMemorySubstrate, LockManagerCpuConfig, LockManagerCpuStats } from '@lockfabric/sim';
import { RunStats, VerbAccounting, runClients, summarize } from '@lockfabric/workloads';
import type { RunSummary, TxnLogEntry, WorkloadSpec } from '@lockfabric/workloads';

export interface InMemoryRunOptions {
  readonly substrate: InMemorySubstrate;
  readonly protocol: ProtocolDefinition;
  readonly protocolOptions?: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly computeNodes?: number;
  readonly memoryNodes?: number;
  /** Clients placed on memory node 0 itself (co-located with the lock words). */
  readonly colocatedClients?: number;
  readonly crashProbability?: number;
  /** Schedule perturbation: extra random delay per verb batch and message (sim only). */
  readonly jitterNs?: number;
  readonly trace?: Trace;
  /** Switch packet faults, for protocols that run through the switch. */
  readonly switchFaults?: FaultSpec;
  /** Machine–switch link order (sim): see InMemoryClusterConfig.switchLinks. */
  readonly switchLinks?: 'fifo' | 'jittered';
  /** Called now and then with the fraction done (by time or operations). */
  readonly onProgress?: (fraction: number) => void;
  /**
   * Fault: a compute node fails (its clients and node service go silent) and, `detectionMs`
   * later, node services are told through `NodeServiceContext.failures`. Its clients' history
   * ends at the failure; they count as failed clients for the checker.
   */
  readonly nodeFailure?: NodeFailureSpec;
  /**
   * Sim only, opt-in: node services (agent pools, lock servers) pay `packetNs` of one of their
   * machine's lock-manager cores per packet (see InMemoryClusterConfig.lockManagerCpu).
   */
  readonly lockManagerCpu?: LockManagerCpuConfig;
  /**
   * Indices into the compute nodes that host clients (round-robin); default all. Lets a
   * dedicated lock-server node (SrvLock, NetLock: the lowest compute node) run no clients.
   */
  readonly clientComputeNodes?: readonly number[];
  /** Transactional runs (`spec.transactions`): receives each committed transaction of the surviving clients. */
  readonly onTxnCommit?: (entry: TxnLogEntry) => void;
}

export interface InMemoryRunResult {
  readonly substrate: InMemorySubstrate;
  readonly protocol: string;
  readonly summary: RunSummary;
  readonly verdict: Verdict;
  readonly history: HistoryRecorder;
  readonly digest: string;
  /** Verbs served by every NIC, by opcode. */
  readonly verbs: Readonly<Record<string, number>>;
  /** Verbs the clients issued, by the phase that issued them. */
  readonly accounting: VerbAccounting;
  readonly nicCounters: ReturnType<InMemoryCluster['nicCounters']>;
  readonly crashed: ReadonlyMap<string, number>;
  /** Events executed and wall time, for the simulator's own speed. */
  readonly simEvents: number;
  readonly wallMs: number;
  /** Set when the run was cut off with acquires still pending (sim safety stop). */
  readonly cutOff: boolean;
  /** The node failure of `nodeFailure`, once it happened. */
  readonly nodeFailure?: NodeFailureOutcome;
  /** Lock-manager queue counters per machine, when `lockManagerCpu` was set. */
  readonly lockManagerCpu?: Record<string, LockManagerCpuStats>;
  /** The switch program's decisions by name (packets per decision), when the run has a switch. */
  readonly switchDecisions?: Readonly<Record<string, number>>;
}

/** Runs one workload on `sim` or `embedded` and checks the history. */
export async function runInMemory(options: InMemoryRunOptions): Promise<InMemoryRunResult> {
  const { protocol } = options;
  const { spec } = options;
  const clusterSpec = {
    seed: spec.seed,
    lockCount: spec.locks,
    entryBytes: protocol.entryBytes,
    computeNodes: options.computeNodes ?? 2,
    memoryNodes: options.memoryNodes ?? 1,
    ...(options.jitterNs !== undefined ? { jitterNs: options.jitterNs } : {}),
    ...(options.trace ? { trace: options.trace } : {}),
    ...(protocol.switchProgram ? { switchProgram: buildSwitchProgram(protocol.switchProgram, spec, options.protocolOptions) } : {}),
    ...(options.switchFaults ? { switchFaults: options.switchFaults } : {}),
    ...(options.switchLinks ? { switchLinks: options.switchLinks } : {}),
    ...(options.lockManagerCpu ? { lockManagerCpu: options.lockManagerCpu } : {}),
  };
  const wallStart = performance.now();
  const built = options.substrate === 'sim' ? createSimCluster(clusterSpec) : createEmbeddedCluster(clusterSpec);
  const { cluster } = built;
  const colocated = Math.min(options.colocatedClients ?? 0, spec.clients);
  const clientNodes = clientComputeNodes(cluster.computeNodeIds, options.clientComputeNodes);
  const addresses: ClientAddress[] = Array.from({ length: spec.clients }, (_, i) => ({
    node: i < colocated ? cluster.memoryNodeIds[0]! : clientNodes[i % clientNodes.length]!,
    client: i,
  }));
  const failures = new FailureHub();
  const victimNode = options.nodeFailure ? cluster.computeNodeIds[options.nodeFailure.computeNode] : undefined;
  if (options.nodeFailure && victimNode === undefined) throw new RangeError(`nodeFailure: no compute node ${options.nodeFailure.computeNode}`);
  let victimDead = false;
  // Node services (agent pools, lock servers, recovery) start before any client.
  const services: NodeService[] = [];
  const serviceContext = (node: number) => ({ ports: cluster.servicePorts({ node, client: SERVICE_CLIENT }), memoryNodes: cluster.memoryNodeIds, computeNodes: cluster.computeNodeIds, failures });
  for (const node of cluster.memoryNodeIds) {
    const service = protocol.services?.memory?.(serviceContext(node), options.protocolOptions);
    if (service) services.push(service);
  }
  let victimService: NodeService | undefined;
  for (const node of cluster.computeNodeIds) {
    const service = protocol.services?.compute?.(serviceContext(node), options.protocolOptions);
    if (service) services.push(service);
    if (node === victimNode) victimService = service;
  }
  const ports = addresses.filter((a) => a.node !== victimNode).map((address) => cluster.clientPorts(address));
  const victimPorts = addresses.filter((a) => a.node === victimNode).map((address) => severablePorts(cluster.clientPorts(address), () => victimDead));
  const recorder = new HistoryRecorder();
  const stats = new RunStats();
  const accounting = new VerbAccounting();
  let finished = false;
  const common = {
    protocol,
    ...(options.protocolOptions ? { protocolOptions: options.protocolOptions } : {}),
    spec,
    clock: cluster.clock,
    ...(options.crashProbability ? { crashProbability: options.crashProbability } : {}),
  };
  const survivorsRun = runClients({ ...common, ports, recorder, stats, accounting, ...(options.onTxnCommit ? { onTxnCommit: options.onTxnCommit } : {}) });
  // The failing node's clients record apart: only what happened before the failure is kept.
  const victimRecorder = new HistoryRecorder();
  const victimStop = new AbortController();
  const victimsRun = victimPorts.length > 0 ? runClients({ ...common, ports: victimPorts, recorder: victimRecorder, stats: new RunStats(), signal: victimStop.signal }) : undefined;
  let failure: NodeFailureOutcome | undefined;
  const failureDone = options.nodeFailure && victimNode !== undefined ? failNode(options.nodeFailure, victimNode) : undefined;
  async function failNode(plan: NodeFailureSpec, node: number): Promise<void> {
    await cluster.clock.sleep(plan.atMs * NS_PER_MS);
    const failedAtNs = cluster.clock.nowNs();
    victimDead = true;
    victimStop.abort(new Error(`node ${node} failed`));
    await victimService?.stop();
    await cluster.clock.sleep((plan.detectionMs ?? 0) * NS_PER_MS);
    failures.fire(node);
    failure = { node, failedAtNs, reportedAtNs: cluster.clock.nowNs() };
  }
  // The failed node's clients are not waited for: severed, they may retry until their own limits.
  void victimsRun?.catch(() => undefined);
  const run = Promise.all([survivorsRun, failureDone])
    .then(([survivors]) => survivors)
    .finally(() => {
      finished = true;
    });

  let simEvents = 0;
  let cutOff = false;
  const startNs = cluster.clock.nowNs();
  const progress = setInterval(() => {
    const byTime = spec.durationMs ? (cluster.clock.nowNs() - startNs) / (spec.durationMs * NS_PER_MS) : 0;
    const byOps = spec.operations ? stats.acquires / spec.operations : 0;
    options.onProgress?.(Math.min(1, Math.max(byTime, byOps)));
  }, 200);
  try {
    if (built.scheduler.kind === 'virtual') {
      // Safety stop: an acquire that never completes (a protocol bug, or a crashed holder without
      // timeouts) must not spin the simulator forever; liveness reports what was left pending.
      const horizonMs = (spec.durationMs ?? 60_000) + 10 * (spec.timeoutMs ?? 1_000);
      const outcome = await built.scheduler.run({ untilNs: startNs + horizonMs * NS_PER_MS, stop: () => finished });
      simEvents = outcome.events;
      cutOff = !finished;
    } else {
      const hardStopMs = (spec.durationMs ?? 60_000) + 10 * (spec.timeoutMs ?? 1_000);
      await Promise.race([run, new Promise((resolve) => setTimeout(resolve, hardStopMs).unref())]);
      cutOff = !finished;
    }
  } finally {
    clearInterval(progress);
    for (const service of services) await service.stop();
  }
  const result = finished ? await run : undefined;
  const crashed = new Map(result?.crashed ?? []);
  if (failure) {
    for (const p of victimPorts) crashed.set(clientKey(p.self), failure.failedAtNs);
    for (const event of victimRecorder.events()) if (event.timeNs <= failure.failedAtNs) recorder.append(event);
  }
  const endNs = result?.endNs ?? cluster.clock.nowNs();
  const verbs = sumVerbs(cluster);
  // Lease safety: holds whose release reported LeaseExpiredError count only up to their grant.
  const leasesExpired = (stats.failuresByCode.get('LEASE_EXPIRED') ?? 0) > 0;
  const verdict = checkHistory(leasesExpired ? clipExpiredLeases([...recorder.events()], 0) : recorder, { failedClients: crashed });
  options.onProgress?.(1);
  return {
    substrate: options.substrate,
    protocol: protocol.id,
    summary: summarize(stats, endNs - startNs, verbs),
    verdict,
    history: recorder,
    digest: historyDigest(recorder),
    verbs,
    accounting,
    nicCounters: cluster.nicCounters(),
    crashed,
    simEvents,
    wallMs: performance.now() - wallStart,
    cutOff,
    ...(failure ? { nodeFailure: failure } : {}),
    ...(options.lockManagerCpu ? { lockManagerCpu: cluster.lockManagerCpuStats() } : {}),
    ...(cluster.switch ? { switchDecisions: cluster.switch.counters().decisions } : {}),
  };
}

/** The compute nodes that host clients: those at `indices`, or all of them. */
function clientComputeNodes(computeNodes: readonly number[], indices: readonly number[] | undefined): readonly number[] {
  if (indices === undefined) return computeNodes;
  const nodes = indices.map((i) => {
    const node = computeNodes[i];
    if (node === undefined) throw new RangeError(`clientComputeNodes: no compute node ${i} (there are ${computeNodes.length})`);
    return node;
  });
  if (nodes.length === 0) throw new RangeError('clientComputeNodes: at least one compute node must host clients');
  return nodes;
}


function sumVerbs(cluster: InMemoryCluster): Record<string, number> {
  const total: Record<string, number> = {};
  for (const snapshot of Object.values(cluster.nicCounters())) {
    for (const [op, count] of Object.entries(snapshot.byOpcode as Record<string, number>)) total[op] = (total[op] ?? 0) + count;
  }
  return total;
}
