export * from './random.js';
export * from './scheduler.js';
export * from './scheduler-clock.js';
export * from './mailbox-hub.js';
export * from './cluster.js';
export * from './substrates.js';
export * from './lock-manager-cpu.js';
export * from './racks.js';
