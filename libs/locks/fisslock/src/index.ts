export * from './wire.js';
export * from './options.js';
export * from './reliable-link.js';
export * from './agent-pool.js';
export * from './registry.js';
export * from './client.js';
export * from './protocol.js';
