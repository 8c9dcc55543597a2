export * from './lock-entry.js';
export * from './queue-node.js';
export * from './errors.js';
export * from './mcs.js';
