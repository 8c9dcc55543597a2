export * from './spec.js';
export * from './scramble.js';
export * from './zipf.js';
export * from './key-chooser.js';
export * from './results.js';
export * from './runner.js';
export * from './run-clients.js';
