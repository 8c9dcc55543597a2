export { startCoordinator, type Coordinator, type CoordinatorDeps } from './coordinator.js';
export { startCoordinatorServer, type CoordinatorServer, type CoordinatorServerOptions } from './coordinator-server.js';
export { GrpcDeciderControl } from './switch-control/grpc-decider-control.js';
export { NatsQueueParticipant } from './nats-participants.js';
export { announceSwitchControl, announceLockTable } from '@lockfabric/live';
// The control plane moved to libs/control; what live tests import from here stays here (named, so
// no protocol-named export of libs/control passes through an app).
export { parseRecoveryDetail, queueRecoverySubject } from '@lockfabric/control';
