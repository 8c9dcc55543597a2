import { ComputeRunService, LiveFabric } from '@lockfabric/run-host';
import type { Logger, MailboxHub } from '@lockfabric/live';
import type { NodeId, Trace } from '@lockfabric/ports';
import type { MemoryNodeExecutor } from './memory-executor.js';

export interface LocalClientsHost {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Lock clients that run on this memory node, beside its lock table: ALock's local cohort
 * (ALock §3–4). The driver starts them like a compute node's, through ComputeNodeService, and the
 * same protocol code runs them; only their ports differ. Their Verbs port has CPU access to this
 * node's memory (lock table and descriptor slots), so a protocol that checks `isLocal` takes the
 * lock with loads and stores and no verb; verbs they do post loop back through this node's
 * executor (fences and the IOPS cap apply), and verbs to peers' descriptors go over gRPC.
 */
export async function startLocalClients(deps: { node: NodeId; executor: MemoryNodeExecutor; mailboxes: MailboxHub; maxClients: number; port: number; trace: Trace; logger: Logger }): Promise<LocalClientsHost> {
  const fabric = new LiveFabric(deps.node, deps.executor, deps.logger);
  const runs = new ComputeRunService({
    node: deps.node,
    maxClients: deps.maxClients,
    fabric,
    memory: deps.executor.memory,
    memoryNodes: [deps.executor.describe()],
    mailboxes: deps.mailboxes,
    trace: deps.trace,
    logger: deps.logger,
    hostsTable: true,
  });
  const { server, port } = await runs.listen(deps.port);
  deps.logger.info(`memory node ${deps.node}: hosts up to ${deps.maxClients} local lock clients on :${port}`);
  return {
    port,
    close: async () => {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await runs.close();
      fabric.close();
    },
  };
}
