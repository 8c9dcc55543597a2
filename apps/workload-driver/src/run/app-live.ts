import { MemoryQueuePair, silentLogger } from '@lockfabric/live';
import { ConfigError, FabricAccessError } from '@lockfabric/ports';
import type { RemoteAddr, Verbs, WorkRequest } from '@lockfabric/ports';
import { DATA_REGION, appDataImages, checkAppRun, mergeAppLogs } from '@lockfabric/workloads';
import type { AppCheck, AppRunLog, AppSpec, DataRegions } from '@lockfabric/workloads';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { addressOf } from './remote-cluster.js';

/** The driver's node id on memory nodes' queue pairs (as when it zeroes the lock table). */
const DRIVER_NODE = 65_000;
/** 16 × 64 KiB per doorbell keeps each gRPC frame under its 4 MiB default limit. */
const CHUNK_BYTES = 64 * 1024;
const CHUNKS_PER_POST = 16;

interface DataNode {
  readonly qp: MemoryQueuePair;
  readonly node: number;
  readonly rkey: number;
  readonly sizeBytes: number;
}

/** Connects to every memory node's data region, in node-id order (the order of the lock table). */
async function connectDataNodes(memories: readonly ProcessRecord[]): Promise<DataNode[]> {
  const nodes = await Promise.all(
    memories.map(async (m) => {
      const qp = await MemoryQueuePair.connect(addressOf(m, m.grpc), DRIVER_NODE, { logger: silentLogger });
      const description = await qp.describe();
      const region = description.regions.find((r) => r.region === DATA_REGION);
      if (!region) {
        qp.close();
        throw new ConfigError([`memory node ${description.node} has no data region (region ${DATA_REGION}): restart the cluster with this build`]);
      }
      return { qp, node: description.node, rkey: region.rkey, sizeBytes: region.sizeBytes };
    }),
  );
  return nodes.sort((a, b) => a.node - b.node);
}

function regionsOf(nodes: readonly DataNode[]): DataRegions {
  return nodes.map((n) => ({ node: n.node, region: DATA_REGION, rkey: n.rkey }));
}

/**
 * Writes the application's initial data (zeros for the object store, the bulk-loaded tree) into
 * every memory node's data region before the run, so each run starts from the same state.
 */
export async function loadAppData(memories: readonly ProcessRecord[], app: AppSpec, items: number): Promise<void> {
  const nodes = await connectDataNodes(memories);
  try {
    const images = appDataImages(app, items, nodes.length);
    await Promise.all(
      nodes.map(async (n, i) => {
        const image = images[i]!;
        if (image.byteLength > n.sizeBytes) throw new ConfigError([`memory node ${n.node} has a ${n.sizeBytes}-byte data region; the ${app.kind} run needs ${image.byteLength} (raise memory.dataBytes or shrink the workload)`]);
        const batch: WorkRequest[] = [];
        for (let offset = 0; offset < image.byteLength; offset += CHUNK_BYTES) {
          batch.push({ op: 'write', addr: { node: n.node, region: DATA_REGION, rkey: n.rkey, offset }, data: image.slice(offset, Math.min(image.byteLength, offset + CHUNK_BYTES)) });
        }
        for (let k = 0; k < batch.length; k += CHUNKS_PER_POST) {
          const bad = (await n.qp.post(batch.slice(k, k + CHUNKS_PER_POST))).find((c) => c.status !== 'ok');
          if (bad) throw new FabricAccessError(bad.status, `loading application data into memory node ${n.node}: ${bad.detail ?? ''}`);
        }
      }),
    );
  } finally {
    for (const n of nodes) n.qp.close();
  }
}

/** READ-only verbs over the driver's queue pairs: all the application check needs. */
function readingVerbs(nodes: readonly DataNode[]): Verbs {
  const byNode = new Map(nodes.map((n) => [n.node, n]));
  const unsupported = () => Promise.reject(new FabricAccessError('unsupported', 'the driver only reads application data'));
  return {
    post: unsupported,
    read: async (addr: RemoteAddr, length: number) => {
      const n = byNode.get(addr.node);
      if (!n) throw new FabricAccessError('unknown-node', `no queue pair to memory node ${addr.node}`);
      const [c] = await n.qp.post([{ op: 'read', addr, length }]);
      if (!c || c.status !== 'ok' || !c.data) throw new FabricAccessError(c?.status ?? 'unreachable', `reading application data: ${c?.detail ?? ''}`);
      return c.data;
    },
    write: unsupported,
    cas: unsupported,
    faa: unsupported,
    maskedCas: unsupported,
    maskedFaa: unsupported,
    isLocal: () => false,
    get cpu(): never {
      throw new FabricAccessError('unsupported', 'the driver has no local memory');
    },
  };
}

/** Merges the compute nodes' application logs and runs the application's check on the memory nodes. */
export async function checkAppLive(memories: readonly ProcessRecord[], app: AppSpec, logs: readonly string[], items: number): Promise<{ log: AppRunLog; check: AppCheck }> {
  const log = mergeAppLogs(logs);
  const nodes = await connectDataNodes(memories);
  try {
    return { log, check: await checkAppRun(app, log, readingVerbs(nodes), regionsOf(nodes), items) };
  } finally {
    for (const n of nodes) n.qp.close();
  }
}
