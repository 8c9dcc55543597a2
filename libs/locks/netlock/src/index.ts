export * from './netlock.js';
