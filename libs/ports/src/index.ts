export * from './ids.js';
export * from './errors.js';
export * from './verbs.js';
export * from './mailbox.js';
export * from './switch-port.js';
export * from './clock.js';
export * from './trace.js';
export * from './lock-client.js';
