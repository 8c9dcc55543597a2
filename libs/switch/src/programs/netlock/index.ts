export * from './allocation.js';
export * from './netlock-program.js';
