import { ConfigError } from '@lockfabric/ports';
import type { ClientPorts } from '@lockfabric/ports';
import { AgentPool } from './agent-pool.js';
import { switchCapacityOf } from './fallback.js';
import type { FissLockOptions } from './options.js';

/**
 * Clients and the agent pool of one machine share one {@link AgentPool} (the paper's shared hash
 * table). It is found through the cluster's lock-table layout object, which every port of one
 * cluster shares, so two clusters in one process never meet; the first comer creates it.
 */
const pools = new WeakMap<object, Map<number, AgentPool>>();

export function agentPoolFor(ports: ClientPorts, options: FissLockOptions): AgentPool {
  const port = ports.switchPort;
  if (!port) throw new ConfigError(['fisslock needs a switch port (fabric "switch")']);
  let byNode = pools.get(ports.locks);
  if (!byNode) pools.set(ports.locks, (byNode = new Map()));
  let pool = byNode.get(port.machine);
  if (!pool) {
    pool = new AgentPool(port.machine, port, ports.clock, {
      policy: options.policy,
      rtoNs: options.rtoNs,
      pacingNs: options.pacingNs,
      rtoMaxBackoff: options.rtoMaxBackoff,
      starvePeriodNs: options.starvePeriodNs,
      tStuckNs: options.tStuckNs,
      bounceBackoffNs: options.bounceBackoffNs,
      switchCapacity: switchCapacityOf(ports, options.switchCapacity),
      racks: options.racks,
      trace: ports.trace,
      mutantNoDuplicateSuppression: options.mutantNoDuplicateSuppression,
      mutantNoStarve: options.mutantNoStarve,
      mutantDupNeverGranted: options.mutantDupNeverGranted,
      mutantTrustReRefusal: options.mutantTrustReRefusal,
      mutantRecountDupGrant: options.mutantRecountDupGrant,
      mutantCountForeignCopy: options.mutantCountForeignCopy,
      placement: options.placement,
      mutantParkedModeChange: options.mutantParkedModeChange,
    });
    byNode.set(port.machine, pool);
  }
  return pool;
}

/** The agent pool already running on `machine` of the cluster whose lock layout is `locks` (no ports are made). */
export function existingAgentPool(locks: object, machine: number): AgentPool | undefined {
  return pools.get(locks)?.get(machine);
}

export function forgetAgentPool(ports: ClientPorts): void {
  const port = ports.switchPort;
  if (port) pools.get(ports.locks)?.delete(port.machine);
}
