export * from './traditional-ro.js';
