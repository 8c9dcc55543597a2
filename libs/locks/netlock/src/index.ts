export * from './acquire-once.js';
export * from './netlock.js';
export * from './reliable-release.js';
export * from './request-ledger.js';
export * from './slot-echo.js';
export * from './switch-program/index.js';
export * from './swarm-invariants.js';
