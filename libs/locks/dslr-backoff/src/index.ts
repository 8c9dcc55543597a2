export * from './poll-backoff.js';
export * from './dslr-backoff.js';
