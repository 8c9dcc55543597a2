import { queueRecoveryGroup } from '@lockfabric/locks-common';
import type { ProtocolDefinition } from '@lockfabric/locks-common';
import type { ClientPorts } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { AlockClient } from './alock-client.js';
import { ENTRY_BYTES } from './layout.js';
import type { AlockObserver } from './observer.js';
import { ALOCK_OPTION_HELP, readAlockOptions } from './options.js';
import { alockSwarmOptions } from './swarm-options.js';

/**
 * A client whose protocol steps are reported to `observer` (tests check the spec's invariants with
 * it). It joins its node's queue-recovery group: ALock takes part in the coordinator's queue-lock
 * recovery, as its rule below says.
 */
export function createAlockClient(ports: ClientPorts, options?: ProtocolOptions, observer?: AlockObserver): AlockClient {
  return new AlockClient(ports, readAlockOptions(options), queueRecoveryGroup(ports.locks, ports.self.node), observer);
}

export const alock: ProtocolDefinition = {
  id: 'alock',
  recovery: { compute: { mechanism: 'driven', driver: 'queue-lock', action: 'as mcs: gate, drain, abort, reset of both cohort tails and victim, resume; a dead successor is cut by the releaser as in mcs' } },
  // Live: wait up to 200 ms for a successor's link before cutting the queue, so a slow but live one is not cut.
  liveDefaults: { releaseLinkTimeoutNs: 200_000_000 },
  swarm: { pauses: 'beyond-lease', colocatedClients: true, nodeKill: true, partitions: true, options: alockSwarmOptions },
  summary: 'asymmetric lock: local (CPU-only) and remote (verbs) MCS cohorts with Peterson arbitration and budgets',
  fabric: 'verbs',
  capabilities: ['local-cpu-access'],
  entryBytes: ENTRY_BYTES,
  // Exclusive only: a shared request is held exclusively.
  modes: ['exclusive'],
  options: ALOCK_OPTION_HELP,
  createClient: (ports, options) => createAlockClient(ports, options),
};

/** The same protocol with every client reporting to `observer`, for instrumented simulation runs. */
export function observedAlock(observer: AlockObserver): ProtocolDefinition {
  return { ...alock, createClient: (ports, options) => createAlockClient(ports, options, observer) };
}
