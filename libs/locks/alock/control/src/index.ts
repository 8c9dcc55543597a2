import { queueLockPlugin } from '@lockfabric/control';

/**
 * ALock's control-plane side: a compute node's death is recovered by the coordinator's queue-lock
 * recovery, as for MCS; its clients on memory nodes (the local cohort, ALock §3) take part as
 * queue hosts. The id is written out for the reason MCS's control package gives.
 */
export const alockQueueLock = queueLockPlugin('alock');
