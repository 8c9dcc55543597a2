/**
 * Protocol pieces the node services (coordinator, compute node, switch data plane) wire to their
 * transports: FissLock's agent pool and recovery, the decider's recovery image, DSLR's lock-admin
 * operations, and how the memory node clears a dead node's CASLock and DrTM words. Apps take them from here, never from a protocol module by name.
 */
export { DECIDER_ARRAYS, DECIDER_INITIAL_VALUES, FENCE_WINDOW, FLAG_HAS_AGENT, existingAgentPool, isMachineFenced, machineRecovery, readFissLockOptions, writeSwitchImage } from '@lockfabric/lock-fisslock';
export type { AgentPool, DeciderControl, MachineOrders, ServerReport, StuckReport } from '@lockfabric/lock-fisslock';
export { WordLayout, drainDslrLock, dslr, formatCounters, readDslrOptions, resetDslrTable } from '@lockfabric/lock-dslr';
export { caslockWordAfterDeath, holderTag } from '@lockfabric/lock-caslock';
export { drtmWordAfterDeath, writeLockedWord } from '@lockfabric/lock-drtm';
