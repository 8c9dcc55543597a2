export * from './lock-word.js';
export * from './ncosed.js';
