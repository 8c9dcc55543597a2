import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger, MailboxHub, MalformedInputCounter, Subjects } from '@lockfabric/live';
import type { NodeService, ProtocolOptions } from '@lockfabric/locks-common';
import type { Clock, NodeId, ProtocolId, Trace } from '@lockfabric/ports';
import { ComputeDeaths } from './compute-deaths.js';
import type { MemoryNodeExecutor } from './memory-executor.js';
import { startProtocolServices } from './protocol-services.js';
import { startRecoveryWatch } from './recovery-watch.js';
import type { RecoveryWatch } from './recovery-watch.js';

export interface NodeServicesDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly node: NodeId;
  readonly executor: MemoryNodeExecutor;
  readonly mailboxes: MailboxHub;
  readonly clock: Clock;
  readonly trace: Trace;
  readonly logger: Logger;
  readonly malformed: MalformedInputCounter;
  readonly lockTableBytes: number;
  /** This process's incarnation, stamped by the lock managers on their replies. */
  readonly incarnation?: number;
  /** Options of a protocol's service; the memory-node process passes none (tests pass mutants). */
  readonly serviceOptions?: Readonly<Partial<Record<ProtocolId, ProtocolOptions>>>;
}

export interface NodeServices {
  readonly services: readonly NodeService[];
  readonly watch: RecoveryWatch;
  stop(): Promise<void>;
}

/**
 * A memory node's protocol services and its part of compute-node recovery, on one feed of
 * deaths: each fence the recovery watch applies reaches the services (the lock managers of rpc
 * and traditional drop the dead node's holds) before the table is recovered and the recovery
 * reported on `ctl.recovery.phase`.
 */
export function startNodeServices(deps: NodeServicesDeps): NodeServices {
  const deaths = new ComputeDeaths(deps.node, deps.logger);
  const services = startProtocolServices({ ...deps, failures: deaths });
  const watch = startRecoveryWatch({ ...deps, onFence: (fence) => deaths.fenced(fence.node) });
  return {
    services,
    watch,
    stop: async () => {
      watch.stop();
      for (const service of services) await service.stop();
    },
  };
}
