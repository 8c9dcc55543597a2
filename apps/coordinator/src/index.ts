export { startCoordinator, type Coordinator, type CoordinatorDeps } from './coordinator.js';
export { startCoordinatorServer, type CoordinatorServer, type CoordinatorServerOptions } from './coordinator-server.js';
export {
  DEFAULT_MAX_MEMBERS,
  FailureDetector,
  type FailureDetectorOptions,
  type HeartbeatInput,
  type HeartbeatOutcome,
  type MemberRecord,
  type MemberState,
  type Transition,
} from './failure-detector.js';
export { EPOCH_TIME_SHIFT, EpochSource, epochFloor } from './epoch-source.js';
export { DEFAULT_ANNOUNCE_INTERVAL_MS, Membership, type MembershipOptions, type MembershipView, type PublishReason } from './membership.js';
export { decodeHeartbeat } from './heartbeat-decoder.js';
export { membershipViewToWire } from './view-wire.js';
export { COMPUTE_FAILURE_RULES, rulesFor, type RecoveryMechanism, type RecoveryRule } from './recovery-rules.js';
export { DEFAULT_KEEP_DONE, RecoveryBook, type FailedMember, type Recovery, type RecoveryAction, type RecoveryBookOptions } from './recovery-book.js';
export { failureNoticeToWire, parseRecoveryDetail, recoveryToWire } from './recovery-wire.js';
export { announceLockTable } from './table-announce.js';
export * from './fisslock-recovery/index.js';
export { startNetLockPurge, type DeadCompute, type NetLockPurgeDeps, type NetLockPurgeOutcome, type NetLockPurgeTrigger, type PurgeCall } from './netlock-purge.js';
export * from './queue-lock-recovery/index.js';
