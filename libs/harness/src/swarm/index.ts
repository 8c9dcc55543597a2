export * from './case.js';
export * from './run.js';
