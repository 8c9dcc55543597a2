export { RECOVERY_ATTR, runFissRecovery, type FissParticipant, type FissRecoveryParams, type FissRecoveryRun, type FissStage, type FissStepTiming } from './fiss-recovery-driver.js';
export { GrpcDeciderControl } from './switch-decider-control.js';
export { FissWireError, machineOrdersToWire, serverReportFromWire } from './fiss-wire.js';
export { FissCallError, NatsFissParticipant, type FissVerb } from './nats-participant.js';
export { announceFissSwitch, startFissRecoveryHook, type FailedCompute, type FissRecoveryHook, type FissRecoveryHookDeps } from './fiss-recovery-hook.js';
