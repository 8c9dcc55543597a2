export * from './capacity.js';
export * from './decider.js';
export * from './switch-program.js';
export * from './switch-check.js';
