export * from './catalog.js';
export * from './switch-programs.js';
