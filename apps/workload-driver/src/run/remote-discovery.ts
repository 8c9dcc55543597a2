import { create } from '@bufbuild/protobuf';
import { MemoryQueuePair, UnaryClient, assertTransportSecurityMatches, silentLogger } from '@lockfabric/live';
import { ConfigError, FabricAccessError, errorMessage } from '@lockfabric/ports';
import { ComputeNodeService, DescribeComputeNodeRequestSchema } from '@lockfabric/wire';
import type { ClusterState } from '../cluster/local-cluster.js';
import { findDownNodes, portsToProbe, survivingComputeNodes } from './reachability.js';
import type { ReachOptions } from './reachability.js';
import { hostPortOf, parseAddressList, remoteRecord } from './remote-cluster.js';
import type { RemoteRecord } from './remote-cluster.js';

export interface RemoteClusterOptions {
  /** ComputeNodeService addresses, `host:port`. */
  readonly computeNodesAt: readonly string[];
  /** MemoryService addresses, `host:port`. */
  readonly memoryNodesAt: readonly string[];
  /**
   * Port on which each compute node serves its descriptor memory (compute.memoryGrpcPort): one
   * for every compute node, or one per compute address, in order.
   */
  readonly computeMemoryPorts: readonly number[];
  readonly cluster?: string;
  readonly describeTimeoutMs?: number;
  /** How nodes are found down first (see findDownNodes); tests shorten or fake it. */
  readonly reach?: ReachOptions;
  /** Injected by tests: asks the compute node at an address its machine id. */
  readonly describeCompute?: (address: string, timeoutMs: number) => Promise<number>;
  /** Injected by tests: asks the memory node at an address its machine id. */
  readonly describeMemory?: (address: string, timeoutMs: number) => Promise<number>;
  /**
   * Test-only: discovery as before session 19, every node asked its id first, so one unreachable
   * compute node fails the whole run (exit 4) instead of being left out as down at the start.
   */
  readonly mutantStrictDiscovery?: boolean;
}

/**
 * Asks the nodes who they are (their machine ids) and returns a cluster state the live runner
 * accepts. As for a local cluster, each node's ports are probed first (findDownNodes): a compute
 * node that is down, or answers but not Describe, stays in the state under its address, marked
 * down, so every run leaves it out and reports it in `downAtStart`; a memory node down or no
 * compute node up fails here (exit 4), within the probe's timeout.
 */
export async function discoverRemoteCluster(options: RemoteClusterOptions): Promise<ClusterState> {
  const timeoutMs = options.describeTimeoutMs ?? 10_000;
  const computes = options.computeNodesAt.map((a) => parseAddressList('compute-nodes-at', a)).flat();
  const memories = options.memoryNodesAt.map((a) => parseAddressList('memory-nodes-at', a)).flat();
  const memoryPorts = memoryPortsOf(options.computeMemoryPorts, computes.length);
  const describeCompute = options.describeCompute ?? describeComputeNode;
  const describeMemory = options.describeMemory ?? describeMemoryNode;
  // Stand-ins (ids unknown yet) in the order given: the compute nodes' order sets their client shares and seeds.
  const memoryStandIns = memories.map((at, i) => remoteRecord('memory', undefined, at, { grpc: at.port }, i));
  const computeStandIns = computes.map((at, i) => remoteRecord('compute', undefined, at, { grpc: at.port, memoryGrpc: memoryPorts[i]! }, memories.length + i));
  const down = options.mutantStrictDiscovery ? [] : await findDownNodes([...memoryStandIns, ...computeStandIns], options.reach);
  survivingComputeNodes(computeStandIns, down, true);
  const downReason = (r: RemoteRecord) => down.find((d) => d.name === r.name)?.reason;
  // A missing or needless certificate is named now, not reported as a node down or unreachable.
  await assertTransportSecurityMatches([...memoryStandIns, ...computeStandIns].filter((r) => downReason(r) === undefined).flatMap(portsToProbe));
  const memoryRecords = await Promise.all(
    memories.map(async (at, i) => {
      const node = await describeMemory(hostPortOf(at), timeoutMs).catch((error: unknown) => {
        throw new FabricAccessError('unreachable', `memory node ${hostPortOf(at)} did not answer Describe: ${errorMessage(error)}`);
      });
      return remoteRecord('memory', node, at, { grpc: at.port }, i);
    }),
  );
  const computeRecords = await Promise.all(
    computeStandIns.map(async (standIn, i): Promise<RemoteRecord> => {
      const known = downReason(standIn);
      if (known !== undefined) return { ...standIn, downAtDiscovery: known };
      const address = hostPortOf(computes[i]!);
      try {
        return remoteRecord('compute', await describeCompute(address, timeoutMs), computes[i]!, { grpc: computes[i]!.port, memoryGrpc: memoryPorts[i]! }, i);
      } catch (error) {
        const reason = `${address} did not answer Describe: ${errorMessage(error)}`;
        if (options.mutantStrictDiscovery) throw new FabricAccessError('unreachable', `compute node ${reason}`);
        return { ...standIn, downAtDiscovery: reason };
      }
    }),
  );
  // A node that answered the probe but not Describe is down too: at least one compute node must be left.
  survivingComputeNodes(computeRecords, computeRecords.flatMap((r) => (r.downAtDiscovery === undefined ? [] : [{ node: r.node, name: r.name, role: r.role, reason: r.downAtDiscovery }])), true);
  return stateOf(options, memoryRecords, computeRecords);
}

/** One memory port for every compute node, or one each. */
function memoryPortsOf(ports: readonly number[], computes: number): number[] {
  if (ports.length === 1) return Array.from({ length: computes }, () => ports[0]!);
  if (ports.length === computes) return [...ports];
  throw new ConfigError([`--compute-memory-port: give one port for every compute node or one per --compute-nodes-at address (${computes}), got ${ports.length}`]);
}

function stateOf(options: RemoteClusterOptions, memoryRecords: readonly RemoteRecord[], computeRecords: readonly RemoteRecord[]): ClusterState {
  const ids = [...memoryRecords, ...computeRecords].filter((r) => r.downAtDiscovery === undefined).map((r) => r.node);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate !== undefined) throw new ConfigError([`two nodes report machine id ${duplicate}: every node needs its own node.id`]);
  return { cluster: options.cluster ?? 'remote', natsUrl: '', startedAt: new Date().toISOString(), processes: [...memoryRecords, ...computeRecords] };
}

async function describeMemoryNode(address: string, timeoutMs: number): Promise<number> {
  const qp = await MemoryQueuePair.connect(address, 65_000, { logger: silentLogger, connectTimeoutMs: timeoutMs });
  try {
    return (await qp.describe()).node;
  } finally {
    qp.close();
  }
}

async function describeComputeNode(address: string, timeoutMs: number): Promise<number> {
  const client = new UnaryClient(address, timeoutMs);
  try {
    return (await client.call(ComputeNodeService.method.describe, create(DescribeComputeNodeRequestSchema))).node;
  } finally {
    client.close();
  }
}
