import { ConfigError } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import type { NodeServiceContext } from '@lockfabric/locks-common';
import type { FissLockOptions } from '../options.js';
import { LockIdMapDaemon } from './id-map-daemon.js';
import { forgetIdMap, registerIdMap } from './id-map-registry.js';
import { isIdMapMessage } from './id-map-wire.js';
import { LockIdTable } from './lock-id-table.js';
import { mailboxOnly, mailboxWithout } from './service-mailbox.js';

export interface LockIdService {
  /** The node service context for the node's other servers: its mailbox no longer shows id-map mail. */
  readonly context: NodeServiceContext;
  readonly daemon: LockIdMapDaemon;
  stop(): Promise<void>;
}

/** The node hosting the map: `idMapNode` when set, else the lowest-numbered compute node of the run. */
export function idMapHost(context: Pick<NodeServiceContext, 'computeNodes' | 'ports'>, options: Pick<FissLockOptions, 'idMapNode' | 'mutantIdMapPerMachine'>): NodeId {
  const self = context.ports.self.node;
  if (options.mutantIdMapPerMachine) return self;
  if (options.idMapNode >= 0) {
    if (!context.computeNodes.includes(options.idMapNode)) {
      throw new ConfigError([`fisslock option idMapNode: node ${options.idMapNode} is not a compute node of this run (${context.computeNodes.join(', ')})`]);
    }
    return options.idMapNode;
  }
  return context.computeNodes.length > 0 ? Math.min(...context.computeNodes) : self;
}

/**
 * The id-map part of a FissLock node service (lockIds=mapped): on the host node, the daemon with
 * its table; on every other node, a responder that tells a misdirected request where the map is.
 * Started on every compute node before any client, like the agent pool.
 */
export function startLockIdService(context: NodeServiceContext, options: FissLockOptions, capacity: number): LockIdService {
  const { ports } = context;
  const machine = ports.self.node;
  const host = idMapHost(context, options);
  const daemon = new LockIdMapDaemon({
    mailbox: mailboxOnly(ports.mailbox, isIdMapMessage),
    machine,
    host,
    ...(host === machine ? { table: new LockIdTable(capacity, options.idMapMaxEntries) } : {}),
  });
  const entry = { host, daemon };
  registerIdMap(ports.locks, machine, entry);
  return {
    context: { ...context, ports: { ...ports, mailbox: mailboxWithout(ports.mailbox, isIdMapMessage) } },
    daemon,
    stop: async () => {
      forgetIdMap(ports.locks, machine, entry);
      await daemon.stop();
    },
  };
}
