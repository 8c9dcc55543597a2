// Library entry for tests and tools: the launcher and the run functions behind the CLI.
export * from './cluster/local-cluster.js';
export * from './cluster/nats-binary.js';
export * from './run/in-memory.js';
export * from './run/live.js';
export * from './commands/transport.js';
export * from './report/bench-report.js';
export { repoRoot as repoRootForBench } from './cluster/paths.js';
