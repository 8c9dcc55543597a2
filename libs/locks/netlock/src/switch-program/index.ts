export * from './allocation.js';
export * from './queue-state.js';
export * from './purge.js';
export * from './netlock-program.js';
export * from './request-register.js';
export * from './queue-plan.js';
