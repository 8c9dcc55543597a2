// FissLock's control-plane messages over the ControlBus (the coordinator's S1–S3 hook, the compute
// node's responder, self-fence and stuck-lock reporter, the switch's admission orders) and their
// protobuf codec. The S1–S3 driver itself is protocol code over ports (../src/recovery/driver.ts).
export { FissWireError, machineOrdersFromWire, machineOrdersToWire, serverReportFromWire, serverReportToWire } from './recovery-codec.js';
export { FISS_SUBJECTS } from './subjects.js';
export { followAdmissionOrders, type AdmissionOrder } from './admission-orders.js';
export { DEFAULT_PAUSE_LIMIT_MS, startFissRecoveryResponder, type FissPoolHandle, type FissResponder, type FissResponderDeps, type RecoveryPool } from './recovery-responder.js';
export { BusFissParticipant, FissCallError, type FissVerb } from './bus-participant.js';
export { startFissRecoveryHook, type FissRecoveryHook, type FissRecoveryHookDeps, type HookParticipant, type StuckLockStats } from './recovery-hook.js';
export { startFissStuckReporter, type FissStuckReporter, type FissStuckReporterDeps } from './stuck-reporter.js';
export { startFissSelfFence, type FissSelfFence, type FissSelfFenceDeps } from './self-fence.js';
export { AnnouncedSwitches, MissingRackSwitchError, rackedSwitchControl } from './rack-switches.js';
export { FissInProcessWiring, fissInProcessControl, fissInProcessWiring, switchModelControl, type FissCluster, type InProcessFissRecovery, type InProcessFissTimings, type RegisterSwitch } from './in-process.js';
