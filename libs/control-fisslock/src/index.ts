export { FissParticipantError, RECOVERY_ATTR, runFissRecovery, type FissParticipant, type FissRecoveryParams, type FissRecoveryRun, type FissStage, type FissStepTiming } from './fiss-recovery-driver.js';
export { DEFAULT_ATTEMPT_POLICY, nextStep, type AttemptPolicyOptions, type FailedAttempt, type NextStep } from './attempt-policy.js';
export type { FissSwitchControl, FissSwitchControlFactory, SwitchAdmissionState } from './switch-control.js';
export { FissWireError, machineOrdersToWire, serverReportFromWire } from './fiss-wire.js';
export { BusFissParticipant, FissCallError, type FissVerb } from './bus-participant.js';
export { startFissRecoveryHook, type FissRecoveryHook, type FissRecoveryHookDeps, type HookParticipant, type StuckLockStats } from './fiss-recovery-hook.js';
