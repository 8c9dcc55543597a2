/**
 * Switch data-plane programs that protocols ship with their module. Apps (the switch data plane,
 * the workload driver) reach them here, never by a protocol module's name, so the switch library
 * keeps only the pipeline model and generic programs.
 */
export { NETLOCK_FLAG_SWITCH, allocateSwitchQueues, netlockProgram, profileLockTrace } from '@lockfabric/lock-netlock';
export type { NetLockProgram, NetLockProgramOptions, QueueAllocation, TraceRequest } from '@lockfabric/lock-netlock';
export { FISSLOCK_POLICIES, FLAG_DUP, MAX_MACHINE_ID, fissLockDecider, fissLockDeciderOptions, lockCapacity } from '@lockfabric/lock-fisslock';
export type { FissLockDecider, FissLockPolicy } from '@lockfabric/lock-fisslock';
