export * from './in-memory-run.js';
export * from './switch-programs.js';
export * from './switch-net.js';
export * from './node-failure.js';
export * from './failure-recovery-check.js';
export * from './pause-run.js';
export * from './queue-recovery-scenario.js';
