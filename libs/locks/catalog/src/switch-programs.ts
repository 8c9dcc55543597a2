/**
 * Switch data-plane programs that protocols ship with their module. Apps (the switch data plane,
 * the workload driver) reach them here, never by a protocol module's name, so the switch library
 * keeps only the pipeline model and generic programs.
 */
export { NETLOCK_FLAG_SWITCH, allocateSwitchQueues, netlockProgram, profileLockTrace } from '@lockfabric/lock-netlock';
export type { NetLockProgram, NetLockProgramOptions, QueueAllocation } from '@lockfabric/lock-netlock';
