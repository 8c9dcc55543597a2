// Ports and substrates of the control plane
export { deliverSafely, subjectMatches, type BusMessage, type BusStatus, type ControlBus, type Unsubscribe } from './bus.js';
export { InMemoryControlBus, type BusScheduler, type InMemoryControlBusOptions } from './in-memory-bus.js';
export { ControlBusClosedError, ControlNoRespondersError, ControlRequestTimeoutError, ControlSubjectError, QueueRecoveryNoResetterError } from './errors.js';
export { MalformedTally, silentLogger, type Logger, type MalformedSink } from './logger.js';
export { createSubjects, SubjectTokenError, type Subjects } from './subjects.js';
// Coordinator: membership, failure detection, recovery bookkeeping and orchestration
export { startControlPlane, type ControlPlane, type ControlPlaneDeps, type ControlPlaneEvents } from './control-plane.js';
export {
  DEFAULT_MAX_MEMBERS,
  FailureDetector,
  UNHEARD_INCARNATION,
  type ExpectedMember,
  type FailureDetectorOptions,
  type HeartbeatInput,
  type HeartbeatOutcome,
  type MemberRecord,
  type MemberState,
  type RecalledMember,
  type Transition,
} from './failure-detector.js';
export { EPOCH_TIME_SHIFT, EpochSource, epochFloor } from './epoch-source.js';
export { DEFAULT_ANNOUNCE_INTERVAL_MS, Membership, type MembershipOptions, type MembershipView, type PublishReason, type RecalledView } from './membership.js';
export { answerViewRecalls, recallView, type ViewRecallDeps } from './view-recall.js';
export { decodeHeartbeat } from './heartbeat-decoder.js';
export { membershipViewToWire } from './view-wire.js';
export { queueLockProtocols, rulesFor, type ProtocolRecoveries, type ProtocolRecovery, type RecoveryMechanism, type RecoveryRule } from './recovery-rules.js';
export { DEFAULT_KEEP_DONE, RecoveryBook, type FailedMember, type Recovery, type RecoveryAction, type RecoveryBookOptions, type RecoveryStep } from './recovery-book.js';
export { failureNoticeToWire, parseRecoveryDetail, recoveryToWire } from './recovery-wire.js';
export type { DriverContext } from './driver-context.js';
export type { DriverMember, MemberDriverContext, MemberRecoveryDriver, MemberRecoveryDriverFactory } from './recovery-driver.js';
export type { InProcessControlPlugin, InProcessCoordinatorPart, InProcessNodeDeps, InProcessPartyDeps } from './in-process-plugin.js';
export { SwitchProgramAbsentError, type SwitchControlCaller, type SwitchControlCallerFactory } from './switch-caller.js';
export { switchAnnouncement, type DeadCompute, type MachineDeathRecovery, type MachineDeathRecoveryFactory } from './machine-death-recovery.js';
export {
  BusQueueParticipant,
  QueueRecoveryCallError,
  queueRecoverySubject,
  startQueueRecoveryHook,
  startQueueRecoveryResponder,
  type QueueRecoveryHook,
  type QueueRecoveryHookDeps,
  type QueueRecoveryVerb,
  type QueueResponder,
  type QueueResponderDeps,
  type QueueRun,
} from './queue-lock-recovery/index.js';
// Compute node: heartbeats, the failure feed for node services, rejoin after a false suspicion
export { startHeartbeatSender, type HeartbeatPublisher, type HeartbeatSenderOptions } from './heartbeat-sender.js';
export { startFailureFeed, type ComputeFailures, type FailureFeed, type FailureFeedDeps } from './failure-feed.js';
export { RejoinPolicy, type RejoinDecision, type ViewEntry } from './rejoin-policy.js';
export { startRejoinWatch, type RejoinWatch, type RejoinWatchDeps } from './rejoin-watch.js';
