export { FissParticipantError, RECOVERY_ATTR, runFissRecovery, type FissParticipant, type FissRecoveryParams, type FissRecoveryRun, type FissStage, type FissStepTiming } from './fiss-recovery-driver.js';
export { DEFAULT_ATTEMPT_POLICY, nextStep, type AttemptPolicyOptions, type FailedAttempt, type NextStep } from './attempt-policy.js';
export type { FissSwitchControl, FissSwitchControlFactory, SwitchAdmissionState } from './switch-control.js';
export { FissWireError, machineOrdersFromWire, machineOrdersToWire, serverReportFromWire, serverReportToWire } from './fiss-wire.js';
export { admissionSubject, followAdmissionOrders, type AdmissionOrder } from './admission-orders.js';
export { DEFAULT_GATE_HOLD_PACKETS, GatedSwitchPort } from './gated-switch-port.js';
export { DEFAULT_PAUSE_LIMIT_MS, startFissRecoveryResponder, type FissPoolHandle, type FissResponder, type FissResponderDeps, type RecoveryPool } from './fiss-recovery-responder.js';
export { BusFissParticipant, FissCallError, type FissVerb } from './bus-participant.js';
export { startFissRecoveryHook, type FissRecoveryHook, type FissRecoveryHookDeps, type HookParticipant, type StuckLockStats } from './fiss-recovery-hook.js';
