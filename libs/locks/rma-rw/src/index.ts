export * from './counters.js';
export * from './rma-rw.js';
