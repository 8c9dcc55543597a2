import { FixedDescriptorDirectory, QueuePairVerbs, createLocalMemory } from '@lockfabric/fabric';
import { availableProtocols } from '@lockfabric/lock-catalog';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, NodeServiceContext, ProtocolOptions } from '@lockfabric/locks-common';
import type { MailboxHub } from '@lockfabric/live';
import type { Clock, NodeId, ProtocolId, Trace } from '@lockfabric/ports';
import { SeededRandom } from '@lockfabric/sim';
import type { MemoryNodeExecutor } from './memory-executor.js';

export interface ProtocolServicesDeps {
  readonly node: NodeId;
  readonly executor: MemoryNodeExecutor;
  readonly mailboxes: MailboxHub;
  readonly clock: Clock;
  readonly trace: Trace;
  readonly lockTableBytes: number;
  /** This process's incarnation (the one its verbs server describes): a restart starts the services anew under a new one. */
  readonly incarnation?: number;
  /** Compute-node deaths, as this node fences them (ComputeDeaths, fed by the recovery watch). */
  readonly failures: NonNullable<NodeServiceContext['failures']>;
  /** Options of a protocol's service; the memory-node process passes none (tests pass mutants). */
  readonly serviceOptions?: Readonly<Partial<Record<ProtocolId, ProtocolOptions>>>;
}

/**
 * Starts every protocol's memory-node service (ShiftLock's era-fenced recovery; the lock manager
 * of rpc and traditional) as client SERVICE_CLIENT of this node: verbs loop back through this
 * node's own NIC, messages use NATS, and compute-node deaths come from this node's fence feed.
 * The services see this node's lock table only, so a deployment with several memory nodes
 * recovers each node's locks on that node.
 */
export function startProtocolServices(deps: ProtocolServicesDeps): NodeService[] {
  const { node, executor } = deps;
  const self = { node, client: SERVICE_CLIENT };
  const lockRegion = executor.memory.regions().find((r) => r.region === 0);
  if (!lockRegion) return [];
  const services: NodeService[] = [];
  for (const protocol of availableProtocols()) {
    const start = protocol.services?.memory;
    if (!start) continue;
    const ports = {
      self,
      verbs: new QueuePairVerbs({
        localNode: node,
        post: async (batch) => executor.executeBatch(batch, node),
        local: createLocalMemory(executor.memory, () => new Promise<void>((resolve) => setImmediate(resolve))),
      }),
      mailbox: deps.mailboxes.mailbox(SERVICE_CLIENT),
      clock: deps.clock,
      random: new SeededRandom(node + 1),
      trace: deps.trace,
      locks: {
        memoryNodes: [{ node, region: 0, rkey: lockRegion.rkey, baseOffset: 0 }],
        entryBytes: protocol.entryBytes,
        lockCount: Math.floor(deps.lockTableBytes / protocol.entryBytes),
      },
      descriptors: new FixedDescriptorDirectory(self, (id) => id === node),
    };
    services.push(start({ ports, memoryNodes: [node], computeNodes: [], failures: deps.failures, ...(deps.incarnation !== undefined ? { incarnation: deps.incarnation } : {}) }, deps.serviceOptions?.[protocol.id]));
  }
  return services;
}
