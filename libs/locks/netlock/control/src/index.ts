/**
 * NetLock's control-plane side: the coordinator's switch-queue purge after a compute machine's
 * death, over the control bus and a switch control port. Protocol code proper stays in
 * @lockfabric/lock-netlock, which may not import the control bus or its protobuf messages.
 */
export {
  NetLockNotInUseError,
  inProcessPurgePort,
  netlockPurgeRecovery,
  callerPurgePort,
  startNetLockPurge,
  type InProcessPurge,
  type NetLockPurgeDeps,
  type NetLockPurgeOutcome,
  type NetLockPurgePort,
  type NetLockPurgeTrigger,
  type PurgeCall,
} from './netlock-purge.js';
export { installNetLockQueues, type InstalledQueues } from './queue-install.js';
export { netlockSwitchCalls, type NetLockSwitchCalls, type NetLockSwitchCallsDeps } from './switch-calls.js';
export { netlockInProcessControl } from './in-process.js';
