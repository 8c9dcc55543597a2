export { findNatsServer, locateNatsServer } from './binary.js';
export { NatsServerNotFoundError, NatsServerStartError } from './errors.js';
export { logSize, reportsReady, waitForNatsReady, type NatsReadyWait } from './ready.js';
export { isRunning, startNatsServer, type NatsServerHandle, type NatsServerOptions } from './server.js';
