export * from './wire.js';
export * from './capacity.js';
export * from './decider.js';
export * from './lock-id-map.js';
export * from './switch-program-factory.js';
