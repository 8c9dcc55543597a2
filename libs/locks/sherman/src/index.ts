export * from './local-table.js';
export * from './sherman.js';
