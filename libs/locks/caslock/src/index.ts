export * from './lock-word.js';
export * from './caslock.js';
