export * from './recovery-state.js';
export * from './repair.js';
export * from './switch-image.js';
export * from './invariants.js';
export * from './recovery-client.js';
export * from './run-recovery.js';
export * from './machine-recovery.js';
export * from './recovery-hold.js';
