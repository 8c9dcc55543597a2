import { QueuePairVerbs } from '@lockfabric/fabric';
import { MemoryQueuePair, silentLogger } from '@lockfabric/live';
import type { Logger } from '@lockfabric/live';
import { FabricAccessError } from '@lockfabric/ports';
import type { Completion, LockTableLayout, NodeId, PostOptions, Verbs, WorkRequest } from '@lockfabric/ports';

/** The coordinator's initiator id on memory nodes' queue pairs (NIC counters), outside any machine id. */
export const COORDINATOR_INITIATOR: NodeId = 65_001;

export interface RemoteLockTable {
  readonly verbs: Verbs;
  readonly table: LockTableLayout;
  close(): void;
}

/**
 * Queue pairs to the memory nodes at `addresses` (in the compute nodes' striping order) and the lock
 * table layout they serve: region 0 from offset 0, as every compute node sees it. The coordinator
 * works on lock words through the same Verbs port the protocols use.
 */
export async function connectLockTable(addresses: readonly string[], entryBytes: number, lockCount: number, logger: Logger = silentLogger): Promise<RemoteLockTable> {
  if (addresses.length === 0) throw new RangeError('no memory nodes given');
  const queuePairs = new Map<NodeId, MemoryQueuePair>();
  const close = (): void => {
    for (const qp of queuePairs.values()) qp.close();
  };
  try {
    const memoryNodes: { node: NodeId; region: number; rkey: number; baseOffset: number }[] = [];
    for (const address of addresses) {
      const qp = await MemoryQueuePair.connect(address, COORDINATOR_INITIATOR, { logger });
      const description = await qp.describe();
      queuePairs.set(description.node, qp);
      const region = description.regions.find((r) => r.region === 0);
      if (!region) throw new FabricAccessError('unknown-region', `memory node ${description.node} at ${address} serves no lock table (region 0)`);
      const needBytes = Math.ceil(lockCount / addresses.length) * entryBytes;
      if (needBytes > region.sizeBytes) throw new RangeError(`memory node ${description.node} holds ${region.sizeBytes} bytes of lock table; ${lockCount} locks need ${needBytes}`);
      memoryNodes.push({ node: description.node, region: 0, rkey: region.rkey, baseOffset: 0 });
    }
    const post = (batch: readonly WorkRequest[], options: PostOptions): Promise<Completion[]> => {
      const node = batch[0]?.addr.node;
      const qp = node === undefined ? undefined : queuePairs.get(node);
      if (!qp || batch.some((wr) => wr.addr.node !== node)) {
        return Promise.resolve(batch.map(() => ({ status: 'unknown-node' as const, detail: `no queue pair to node ${String(node)} from the coordinator` })));
      }
      return qp.post(batch, options);
    };
    return { verbs: new QueuePairVerbs({ localNode: COORDINATOR_INITIATOR, post }), table: { memoryNodes, entryBytes, lockCount }, close };
  } catch (error) {
    close();
    throw error;
  }
}
