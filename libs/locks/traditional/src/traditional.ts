import { memoryServerProtocol } from '@lockfabric/lock-srvlock';
import type { MemoryServerDesign } from '@lockfabric/lock-srvlock';

/**
 * Traditional (DSLR §6.1): the centralized lock manager of the node owning the object keeps a
 * FCFS queue per object, grants and notifies; lock and unlock are each one SEND/RECV exchange
 * (request, response) with the manager's CPU.
 */
export const TRADITIONAL_DESIGN: MemoryServerDesign = {
  id: 'traditional',
  recovery: { compute: { mechanism: 'fence', action: 'as rpc (holds and queued requests)' } },
  summary: 'DSLR §6.1 centralized lock manager: FCFS queue per object on the memory node CPU, over SEND/RECV',
  tag: 2,
  tryOnly: false,
  // Assumption: one lock-manager daemon thread per node (DSLR names a daemon, not its threads).
  threads: 1,
  backoffNs: 0,
  backoffCapNs: 0,
};

export const traditional = memoryServerProtocol(TRADITIONAL_DESIGN);
