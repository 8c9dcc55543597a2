export * from './lock-word.js';
export * from './drtm.js';
export * from './recovery.js';
