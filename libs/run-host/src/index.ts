// Hosting a driver's runs in a live process: ComputeNodeService over this node's lock clients,
// their view of the fabric, the run slot and the history stream. Compute nodes host runs, and so
// do memory nodes for the clients beside their table (ALock's local cohort).
export { ComputeRunService } from './run-service.js';
export type { CurrentRun, RunServiceDeps } from './run-service.js';
export { LiveFabric, MEMORY_REBIND } from './live-fabric.js';
export type { FabricView, LoopbackExecutor } from './live-fabric.js';
export { DEFAULT_PREPARED_TIMEOUT_MS, RunSlot, RunSlotError } from './run-slot.js';
export type { RunSlotErrorCode, RunSlotPhase, Schedule } from './run-slot.js';
