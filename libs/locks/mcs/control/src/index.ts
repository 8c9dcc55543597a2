import { queueLockPlugin } from '@lockfabric/control';

/**
 * MCS's control-plane side: a compute node's death is recovered by the coordinator's queue-lock
 * recovery (README, "Failures"), which its clients join through their queue-recovery group. The id
 * is written out, not taken from the definition: the harness starts this package, and MCS's own
 * tests run the harness (a project cycle); ProtocolId and the catalog's plug-in test hold it.
 */
export const mcsQueueLock = queueLockPlugin('mcs');
