// Tests start nats-server through the project's one launcher (libs/nats-server).
export { findNatsServer, NatsServerNotFoundError, NatsServerStartError, startNatsServer, type NatsServerHandle, type NatsServerOptions } from '@lockfabric/nats-server';
