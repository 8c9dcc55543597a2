export * from './traditional.js';
