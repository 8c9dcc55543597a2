import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { runLive } from './live.js';
import type { LiveRunOptions } from './live.js';
import { substrateOptions } from './live-defaults.js';

/** What the warm-up did: reported, never merged into the run's figures. */
export interface WarmUpReport {
  readonly operations: number;
  readonly acquires: number;
  /** Exclusion violations the checker found in the warm-up's history (it is checked like any run). */
  readonly violations: number;
}

/**
 * The warm-up's workload: the run's clients, locks, mix and distribution, `operations` in all and
 * no duration limit. None for transactional and application workloads (their operations count
 * something else, and they load data the run must find untouched) or for no operations.
 */
export function warmUpSpec(spec: WorkloadSpec, operations: number): WorkloadSpec | undefined {
  if (operations <= 0 || spec.transactions || spec.application) return undefined;
  const { durationMs: _duration, ...rest } = spec;
  // every client gets at least one operation, so each client's path is warmed
  return { ...rest, operations: Math.max(operations, spec.clients) };
}

/** One live warm-up: the protocol, the cluster, the run's options and workload, how many operations. */
export interface LiveWarmUp {
  readonly protocol: string;
  readonly state: LiveRunOptions['state'];
  readonly protocolOptions?: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly operations: number;
  readonly placement?: Pick<LiveRunOptions, 'skipReleaseProbability' | 'colocatedClients' | 'mutantLocalVerbs'>;
}

/**
 * Runs the run's workload untimed with `operations` operations, so the service processes run the
 * protocol's path in optimised code when the measured run starts. Its history is checked like any
 * run's: violations and failed nodes go to `note`. None when warmUpSpec gives none.
 */
export async function warmUpLive(input: LiveWarmUp, note: (line: string) => void): Promise<WarmUpReport | undefined> {
  const warmSpec = warmUpSpec(input.spec, input.operations);
  if (!warmSpec) return undefined;
  const { protocol, state } = input;
  const run = await runLive({ state, protocol, protocolOptions: substrateOptions('live', protocol, input.protocolOptions ?? {}), spec: warmSpec, tolerateNodeFailures: true, ...input.placement });
  const violations = run.verdict?.violations.length ?? 0;
  if (violations > 0) note(`warning: ${protocol}: the warm-up's history has ${violations} exclusion violation(s)`);
  const failed = run.failedNodes.map((f) => f.node);
  if (failed.length > 0) note(`warning: ${protocol}: compute node(s) ${failed.join(', ')} failed during the warm-up`);
  return { operations: warmSpec.operations ?? 0, acquires: run.summary.acquires, violations };
}
