import type { NodeService, NodeServiceContext, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { startFallbackManager, switchCapacityOf } from './fallback.js';
import { FISSLOCK_OPTION_HELP, readFissLockOptions } from './options.js';
import { RecoverableFissLockClient } from './recovery/recovery-client.js';
import { agentPoolFor, forgetAgentPool } from './registry.js';

/** The agent pool of one compute node (spec §2.2), started before the node's clients. */
export function startAgentPool(context: NodeServiceContext, options?: ProtocolOptions): NodeService {
  const parsed = readFissLockOptions(options);
  const pool = agentPoolFor(context.ports, parsed);
  // the node's ParLock-style manager for out-of-range locks (§6.6); it also answers topology queries
  const fallback = startFallbackManager(context, switchCapacityOf(context.ports, parsed.switchCapacity));
  return {
    stop: async () => {
      pool.stop();
      forgetAgentPool(context.ports);
      await fallback.stop();
    },
  };
}

export const fisslock: ProtocolDefinition = {
  id: 'fisslock',
  summary: 'FissLock: grant decisions on the switch (18 bits per lock), agents on the holders\' machines',
  fabric: 'switch',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: FISSLOCK_OPTION_HELP,
  switchProgram: 'fisslock',
  services: { compute: startAgentPool },
  // recoverable clients keep what they hold and wait for, which S1 reports (spec §2.3, §7.2)
  createClient: (ports, options) => new RecoverableFissLockClient(ports, readFissLockOptions(options)),
};
