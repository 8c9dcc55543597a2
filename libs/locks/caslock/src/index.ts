export * from './lock-word.js';
export * from './caslock.js';
export * from './recovery.js';
