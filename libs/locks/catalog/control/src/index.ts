/**
 * The control-plane side of the protocols, for the node services (coordinator, compute node): what
 * they wire to NATS, gRPC and metrics: FissLock's S1–S3 recovery over the control bus (FissLock
 * §5.3) and NetLock's switch-queue purge after a machine's death. A separate entry from @lockfabric/lock-catalog because these pieces speak the
 * control bus and its protobuf messages, which protocol code may not import (eslint.config.mjs
 * depConstraints: `type:protocol` sees only ports and the switch model).
 */
export {
  BusFissParticipant,
  FissCallError,
  FissWireError,
  followAdmissionOrders,
  machineOrdersFromWire,
  machineOrdersToWire,
  serverReportFromWire,
  serverReportToWire,
  startFissRecoveryHook,
  startFissRecoveryResponder,
  startFissSelfFence,
  startFissStuckReporter,
} from '@lockfabric/lock-fisslock-control';
export type { AdmissionOrder, FissPoolHandle, FissRecoveryHook, FissRecoveryHookDeps, FissResponder, FissResponderDeps, FissStuckReporter, HookParticipant, RecoveryPool } from '@lockfabric/lock-fisslock-control';
export { GatedSwitchPort, runFissRecovery } from '@lockfabric/lock-fisslock';
export type { FissSwitchControl, FissSwitchControlFactory, SwitchAdmissionState } from '@lockfabric/lock-fisslock';
export { computeNodePlugins, coordinatorControlPlane, coordinatorPlugins, pluginProtocolIds, switchProgramCalls, switchQueueInstaller } from './plugins.js';
export type { ComputeNodePlugin, ComputeNodePluginDeps, ComputeNodePluginHandle, CoordinatorPlugin, CoordinatorPluginDeps, CounterReading, HostedRun, PluginCounter, RecoveryTimings, SwitchProgramControl, SwitchProgramControlFactory, SwitchProgramCalls, SwitchProgramCallsDeps, SwitchQueueInstaller } from './plugins.js';
