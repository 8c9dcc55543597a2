export * from './layout.js';
export * from './options.js';
export * from './swarm-options.js';
export * from './observer.js';
export * from './handover-trace.js';
export { AlockClient, ALOCK_ATTR } from './alock-client.js';
export type { AlockGrant } from './alock-client.js';
export * from './alock.js';
