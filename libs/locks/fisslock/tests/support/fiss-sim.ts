import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, ProtocolOptions } from '@lockfabric/locks-common';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { fissLockDecider } from '@lockfabric/switch';
import type { FaultSpec, FissLockDecider, FissLockPolicy } from '@lockfabric/switch';
import { FissLockClient } from '../../src/client.js';
import { readFissLockOptions } from '../../src/options.js';
import { startAgentPool } from '../../src/protocol.js';
import { agentPoolFor } from '../../src/registry.js';
import type { AgentPool } from '../../src/agent-pool.js';

export interface FissSimOptions {
  readonly seed?: number;
  readonly locks?: number;
  readonly computeNodes?: number;
  readonly policy?: FissLockPolicy;
  readonly faults?: FaultSpec;
  readonly protocolOptions?: ProtocolOptions;
  readonly mutantNoIncarnationCheck?: boolean;
}

export interface Seen {
  readonly to: NodeId;
  readonly type: string;
  readonly machine: NodeId;
  readonly flags: number;
}

/** A sim cluster wired to the FissLock decider, agent pools started, and a tap on every egressed packet. */
export function fissSim(options: FissSimOptions = {}) {
  const decider: FissLockDecider = fissLockDecider({
    lockCount: options.locks ?? 8,
    policy: options.policy ?? 'read-preferring',
    mutantNoIncarnationCheck: options.mutantNoIncarnationCheck === true,
  });
  const { cluster, scheduler } = createSimCluster({
    seed: options.seed ?? 1,
    lockCount: options.locks ?? 8,
    entryBytes: 8,
    computeNodes: options.computeNodes ?? 3,
    memoryNodes: 1,
    switchProgram: decider,
    ...(options.faults ? { switchFaults: options.faults } : {}),
  });
  const protocolOptions: ProtocolOptions = { policy: options.policy ?? 'read-preferring', ...options.protocolOptions };
  const nodes = cluster.computeNodeIds;
  const services: NodeService[] = nodes.map((node) =>
    startAgentPool({ ports: cluster.clientPorts({ node, client: SERVICE_CLIENT }), memoryNodes: cluster.memoryNodeIds, computeNodes: nodes }, protocolOptions),
  );
  const seen: Seen[] = [];
  for (const node of nodes) cluster.switchPort(node).onPacket((p: LockPacket) => seen.push({ to: node, type: p.type, machine: p.machine, flags: p.flags }));
  const client = (node: NodeId, index: number) => new FissLockClient(cluster.clientPorts({ node, client: index }), readFissLockOptions(protocolOptions));
  const pool = (node: NodeId): AgentPool => agentPoolFor(cluster.clientPorts({ node, client: SERVICE_CLIENT }), readFissLockOptions(protocolOptions));
  const sw = cluster.switch;
  if (!sw) throw new Error('no switch');
  return {
    cluster,
    scheduler,
    decider,
    sw,
    nodes,
    seen,
    client,
    pool,
    /** Runs the simulation for `ns` of virtual time (pending acquires keep T_ACQ timers, so `run()` would reach them). */
    step: (ns = 500_000) => scheduler.run({ untilNs: scheduler.nowNs() + ns }),
    stop: async () => {
      for (const s of services) await s.stop();
    },
  };
}
