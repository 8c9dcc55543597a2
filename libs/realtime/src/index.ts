export * from './real-clock.js';
export * from './machine-clock-offset.js';
