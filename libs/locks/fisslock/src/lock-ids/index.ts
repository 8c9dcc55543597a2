export * from './id-map-error.js';
export * from './id-map-wire.js';
export * from './lock-id-table.js';
export * from './id-map-daemon.js';
export * from './id-map-registry.js';
export * from './id-map-service.js';
export * from './lock-id-resolver.js';
export * from './mapped-client.js';
