export * from './splitmix32.js';
export * from './xoshiro128.js';
export * from './small.js';
