import { create } from '@bufbuild/protobuf';
import { MemoryQueuePair, UnaryClient, assertTransportSecurityMatches, silentLogger } from '@lockfabric/live';
import { ConfigError, FabricAccessError, errorMessage } from '@lockfabric/ports';
import { ComputeNodeService, DescribeComputeNodeRequestSchema } from '@lockfabric/wire';
import type { ClusterState, ProcessRecord } from '../cluster/local-cluster.js';

/**
 * A cluster that runs elsewhere (Kubernetes, compose): the driver reaches its compute nodes and
 * memory nodes by address instead of reading a local cluster.json. Each record carries the host
 * the ports belong to; {@link addressOf} is how the live runner builds addresses from records.
 */
export interface RemoteClusterOptions {
  /** ComputeNodeService addresses, `host:port`. */
  readonly computeNodesAt: readonly string[];
  /** MemoryService addresses, `host:port`. */
  readonly memoryNodesAt: readonly string[];
  /** Port on which each compute node serves its descriptor memory (compute.memoryGrpcPort). */
  readonly computeMemoryPort: number;
  readonly cluster?: string;
  readonly describeTimeoutMs?: number;
}

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

type RemoteRecord = ProcessRecord & { readonly host: string };

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

/** `host:port,host:port` → addresses; every malformed entry is reported under the flag's name. */
export function parseAddressList(flag: string, value: string): HostPort[] {
  const problems: string[] = [];
  const out: HostPort[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const match = HOST_PORT.exec(part);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) problems.push(`--${flag}: expected host:port with a port 1-65535, got '${part}'`);
    else out.push({ host: match[1]!, port });
  }
  if (out.length === 0 && problems.length === 0) problems.push(`--${flag}: expected at least one host:port`);
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}

/** `host:port` of a record's port: its own host for remote records, loopback for local ones. */
export function addressOf(record: ProcessRecord, port: number | undefined): string {
  const host = (record as Partial<RemoteRecord>).host ?? '127.0.0.1';
  return `${host}:${port ?? 0}`;
}

/** Asks every node who it is (its machine id) and returns a cluster state the live runner accepts. */
export async function discoverRemoteCluster(options: RemoteClusterOptions): Promise<ClusterState> {
  const timeoutMs = options.describeTimeoutMs ?? 10_000;
  const computes = options.computeNodesAt.map((a) => parseAddressList('compute-nodes-at', a)).flat();
  const memories = options.memoryNodesAt.map((a) => parseAddressList('memory-nodes-at', a)).flat();
  // A missing or needless certificate is named now, not reported as "unreachable" after the timeout.
  await assertTransportSecurityMatches([...computes, ...memories].map(({ host, port }) => `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`));
  const memoryRecords = await Promise.all(
    memories.map(async ({ host, port }): Promise<RemoteRecord> => {
      const qp = await MemoryQueuePair.connect(`${host}:${port}`, 65_000, { logger: silentLogger, connectTimeoutMs: timeoutMs });
      try {
        const description = await qp.describe();
        return record('memory', description.node, host, { grpc: port });
      } finally {
        qp.close();
      }
    }),
  );
  const computeRecords = await Promise.all(
    computes.map(async ({ host, port }) => record('compute', await describeComputeNode(`${host}:${port}`, timeoutMs), host, { grpc: port, memoryGrpc: options.computeMemoryPort })),
  );
  const ids = [...memoryRecords, ...computeRecords].map((r) => r.node);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate !== undefined) throw new ConfigError([`two nodes report machine id ${duplicate}: every node needs its own node.id`]);
  return { cluster: options.cluster ?? 'remote', natsUrl: '', startedAt: new Date().toISOString(), processes: [...memoryRecords, ...computeRecords] };
}

function record(role: 'memory' | 'compute', node: number, host: string, ports: { grpc: number; memoryGrpc?: number }): RemoteRecord {
  return { name: `${role}-${node}`, role, node, pid: 0, log: '', argv: [], host, ...ports };
}

async function describeComputeNode(address: string, timeoutMs: number): Promise<number> {
  const client = new UnaryClient(address, timeoutMs);
  try {
    return (await client.call(ComputeNodeService.method.describe, create(DescribeComputeNodeRequestSchema))).node;
  } catch (error) {
    throw new FabricAccessError('unreachable', `compute node ${address} did not answer Describe: ${errorMessage(error)}`);
  } finally {
    client.close();
  }
}
