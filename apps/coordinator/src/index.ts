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
