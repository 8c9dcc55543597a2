export * from './in-memory-run.js';
