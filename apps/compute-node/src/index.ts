export { DEFAULT_GATE_HOLD_PACKETS, GatedSwitchPort } from './gated-switch-port.js';
export { fissPoolOf, startFissRecoveryResponder, type FissPoolHandle, type FissResponder, type FissResponderDeps, type RecoveryPool } from './fiss-recovery-responder.js';
export { FissOrdersError, machineOrdersFromWire, serverReportToWire, type FissVerb } from './fiss-wire.js';
export type { CurrentRun } from './run-service.js';
