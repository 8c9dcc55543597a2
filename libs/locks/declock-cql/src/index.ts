export * from './flat-client.js';
export * from './declock-cql.js';
