export { FissParticipantError, RECOVERY_ATTR, runFissRecovery, type FissParticipant, type FissRecoveryParams, type FissRecoveryRun, type FissStage, type FissStepTiming } from './fiss-recovery-driver.js';
export { DEFAULT_ATTEMPT_POLICY, nextStep, type AttemptPolicyOptions, type FailedAttempt, type NextStep } from './attempt-policy.js';
export { GrpcDeciderControl, type FissSwitchControl, type SwitchAdmissionState } from './switch-decider-control.js';
export { FissWireError, machineOrdersToWire, serverReportFromWire } from './fiss-wire.js';
export { FissCallError, NatsFissParticipant, type FissVerb } from './nats-participant.js';
export { announceFissSwitch, startFissRecoveryHook, type FailedCompute, type FissRecoveryHook, type FissRecoveryHookDeps, type HookParticipant } from './fiss-recovery-hook.js';
