// Library entry for tests and tools: the launcher and the run functions behind the CLI.
export * from './cluster/local-cluster.js';
export * from './run/in-memory.js';
export * from './run/live.js';
export * from './commands/transport.js';
export * from './report/bench-report.js';
export { repoRoot as repoRootForBench } from './cluster/paths.js';
// Chaos against a local cluster or Kubernetes (`lockfabric chaos`).
export * from './chaos/chaos-request.js';
export * from './chaos/kube-plan.js';
export * from './chaos/local-chaos.js';
export * from './chaos/switch-faults.js';
export * from './chaos/cut-client.js';
export * from './chaos/cut-control.js';
export * from './chaos/cut-relay.js';
export * from './chaos/proc-attribution.js';
export { CHAOS_HELP, chaosCommand, parseChaosArgs } from './commands/chaos.js';
export { clipExpiredLeases, LEASE_EXPIRED } from '@lockfabric/check';
export * from './run/switch-admission.js';
// Paper reproductions (`lockfabric reproduce`): the result contract and the runner.
export type * from './reproduce/contract.js';
export { runReproduce } from './reproduce/runner.js';
export { PAPERS } from './reproduce/papers/index.js';
export { createClusterCa, issueCertificate, issueNatsServerCertificate, certificateFiles, type ClusterCa } from './cluster/certificates.js';
export { natsServerTlsBlock } from './cluster/nats-tls.js';
