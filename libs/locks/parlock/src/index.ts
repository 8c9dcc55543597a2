export * from './parlock.js';
