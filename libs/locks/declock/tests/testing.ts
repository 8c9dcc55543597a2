// Scripted-cluster and sweep support for DecLock's tests, shared with DecLock-CQL's (which runs
// the same engine with another queue). Test-only: resolved from source, never built.
export * from './sim-script.js';
export * from './sweep-support.js';
