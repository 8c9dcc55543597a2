export * from './types.js';
export * from './object-store.js';
export * from './btree-node.js';
export * from './btree.js';
export * from './btree-check.js';
export * from './runner.js';
export * from './check.js';
export * from './wire.js';
