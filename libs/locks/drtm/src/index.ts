export * from './lock-word.js';
export * from './drtm.js';
