export * from './catalog.js';
export * from './switch-programs.js';
export * from './node-services.js';
export * from './program-kinds.js';
export * from './node-plugins.js';
export * from './recoveries.js';
