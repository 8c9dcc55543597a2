export * from './protocol.js';
export * from './options.js';
export * from './backoff.js';
export * from './deadline.js';
export * from './op-span.js';
export * from './handover-span.js';
export * from './queue-recovery.js';
export * from './swarm-profile.js';
