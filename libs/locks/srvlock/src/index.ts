export * from './wire.js';
export * from './lock-table.js';
export * from './lock-server.js';
export * from './server-lock-client.js';
export * from './srvlock.js';
export * from './failover.js';
export * from './server-cpu.js';
export * from './memory-server.js';
