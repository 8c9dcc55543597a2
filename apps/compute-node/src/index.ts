export { DEFAULT_GATE_HOLD_PACKETS, GatedSwitchPort } from './gated-switch-port.js';
export { DEFAULT_PAUSE_LIMIT_MS, fissAgentPoolOf, fissPoolOf, startFissRecoveryResponder, type FissPoolHandle, type FissResponder, type FissResponderDeps, type RecoveryPool } from './fiss-recovery-responder.js';
export { FissOrdersError, machineOrdersFromWire, serverReportToWire, type FissVerb } from './fiss-wire.js';
export type { CurrentRun } from './run-service.js';
export { startFissSelfFence, type FissSelfFence, type FissSelfFenceDeps } from './fiss-self-fence.js';
export { EPOCH_HEADER, EpochStamp, epochStampingNats, followMembershipEpochs } from './epoch-stamp.js';
export { DescriptorMemoryExecutor } from './descriptor-executor.js';
