export { startCoordinator, type Coordinator, type CoordinatorDeps } from './coordinator.js';
export { startCoordinatorServer, type CoordinatorServer, type CoordinatorServerOptions } from './coordinator-server.js';
export { GrpcDeciderControl } from './switch-control/grpc-decider-control.js';
export { GrpcSwitchPurge } from './switch-control/grpc-switch-purge.js';
export { NatsQueueParticipant } from './nats-participants.js';
export { announceSwitchControl, announceLockTable } from '@lockfabric/live';
// The control plane moved to libs/control; what live tests and tools import from here stays here.
export * from '@lockfabric/control';
