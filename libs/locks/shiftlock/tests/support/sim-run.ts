import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import type { CheckOptions, Verdict } from '@lockfabric/check';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { NS_PER_MS, noopTrace } from '@lockfabric/ports';
import type { ClientAddress, Trace } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import type { InMemoryCluster } from '@lockfabric/sim';
import { RunStats, runClients } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { ShiftLockClient, ShiftLockRecoveryServer, readShiftLockOptions, shiftlock } from '../../src/index.js';

export interface SimRunOptions {
  readonly spec: WorkloadSpec;
  readonly protocolOptions?: ProtocolOptions;
  readonly crashProbability?: number;
  readonly jitterNs?: number;
  readonly computeNodes?: number;
  readonly memoryNodes?: number;
  /** Start the recovery server on every memory node (what the memory-node service must do). */
  readonly recoveryServer?: boolean;
  readonly trace?: Trace;
  readonly check?: CheckOptions;
}

export interface SimRunResult {
  readonly verdict: Verdict;
  readonly history: HistoryRecorder;
  readonly cutOff: boolean;
  readonly crashed: ReadonlyMap<string, number>;
  readonly clients: readonly ShiftLockClient[];
  readonly servers: readonly ShiftLockRecoveryServer[];
  readonly cluster: InMemoryCluster;
  readonly acquires: number;
}

/**
 * runInMemory's loop for ShiftLock, plus what runInMemory cannot do: host the recovery server on
 * the memory nodes and expose the clients (their stats) to the test.
 */
export async function simRun(options: SimRunOptions): Promise<SimRunResult> {
  const { spec } = options;
  const { cluster, scheduler } = createSimCluster({
    seed: spec.seed,
    lockCount: spec.locks,
    entryBytes: shiftlock.entryBytes,
    computeNodes: options.computeNodes ?? 2,
    memoryNodes: options.memoryNodes ?? 1,
    ...(options.jitterNs !== undefined ? { jitterNs: options.jitterNs } : {}),
    trace: options.trace ?? noopTrace,
  });
  const parsed = readShiftLockOptions(options.protocolOptions);
  const stopServers = new AbortController();
  const servers = options.recoveryServer === false
    ? []
    : cluster.memoryNodeIds.map((node) => new ShiftLockRecoveryServer(cluster.clientPorts({ node, client: parsed.recoveryClient }), options.protocolOptions));
  const serving = servers.map((server) => server.serve(stopServers.signal));

  const addresses: ClientAddress[] = Array.from({ length: spec.clients }, (_, i) => ({ node: cluster.computeNodeIds[i % cluster.computeNodeIds.length]!, client: i }));
  const clients: ShiftLockClient[] = [];
  const protocol = { ...shiftlock, createClient: (...args: Parameters<typeof shiftlock.createClient>) => {
    const client = shiftlock.createClient(...args) as ShiftLockClient;
    clients.push(client);
    return client;
  } };
  const recorder = new HistoryRecorder();
  let finished = false;
  const run = runClients({
    protocol,
    ...(options.protocolOptions ? { protocolOptions: options.protocolOptions } : {}),
    spec,
    ports: addresses.map((address) => cluster.clientPorts(address)),
    recorder,
    stats: new RunStats(),
    clock: cluster.clock,
    ...(options.crashProbability ? { crashProbability: options.crashProbability } : {}),
  }).finally(() => {
    finished = true;
  });
  const horizonMs = (spec.durationMs ?? 60_000) + 10 * (spec.timeoutMs ?? 1_000);
  await scheduler.run({ untilNs: horizonMs * NS_PER_MS, stop: () => finished });
  stopServers.abort();
  const result = finished ? await run : undefined;
  await Promise.all(serving);
  const crashed = result?.crashed ?? new Map<string, number>();
  const verdict = checkHistory(recorder, { failedClients: crashed, ...options.check });
  const acquires = result?.loops.reduce((n, loop) => n + loop.acquired, 0) ?? 0;
  return { verdict, history: recorder, cutOff: !finished, crashed, clients, servers, cluster, acquires };
}
