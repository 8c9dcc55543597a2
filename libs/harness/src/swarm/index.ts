export * from './case.js';
export * from './run.js';
export * from './crash-sweep.js';
