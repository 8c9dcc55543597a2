import type { ProtocolId } from '@lockfabric/ports';
import type { InProcessControlPlugin } from '../in-process-plugin.js';

/**
 * What a queue lock's control package declares: that a compute node's death is recovered for it by
 * the coordinator's queue-lock recovery (gate, drain, abort, reset, resume). The live coordinator
 * takes `controlPlane` through the catalog's plug-ins, the sim control plane `inProcess`; both only
 * add `protocol` to the one recovery the control plane runs for every queue lock (one gate round
 * per death, whichever queue lock a node runs).
 */
export interface QueueLockPlugin {
  readonly protocol: ProtocolId;
  readonly controlPlane: { readonly queueLockProtocols: readonly string[] };
  inProcess(): InProcessControlPlugin;
}

export function queueLockPlugin(protocol: ProtocolId): QueueLockPlugin {
  const controlPlane = { queueLockProtocols: [protocol] };
  return { protocol, controlPlane, inProcess: () => ({ coordinator: () => controlPlane }) };
}
