import { join } from 'node:path';
import { ConfigError } from '@lockfabric/ports';
import { DEFAULT_PROTOCOL_ID } from '@lockfabric/lock-catalog';
import { WORKLOAD_FLAGS, parseCommandArgs, readWorkload, workloadFlags } from '../cli/args.js';
import type { FlagReader } from '../cli/args.js';
import { isAlive } from '../cluster/process-control.js';
import type { ClusterState } from '../cluster/local-cluster.js';
import { SWITCH_PACKET_FAULTS } from '../nemesis/executor.js';
import type { AppliedFault } from '../nemesis/executor.js';
import type { SkippedFault } from '../nemesis/run-schedule.js';
import { KubeChaos } from '../nemesis/kube-chaos.js';
import type { KubeTarget } from '../nemesis/kube-chaos.js';
import { DEFAULT_KUBE_NAMESPACE } from '../chaos/chaos-request.js';
import { COMPUTE_FAULTS, NEMESIS_FAULTS, SWITCH_FAULTS, parseFaults, planSchedule } from '../nemesis/schedule.js';
import type { NemesisFault, PlannedFault } from '../nemesis/schedule.js';
import type { BenchReport } from '../report/bench-report.js';
import { DEFAULT_CLUSTER_DIR, output } from './context.js';
import { addressListProblems, downAtDiscovery } from '../run/remote-cluster.js';

export const NEMESIS_HELP = `lockfabric nemesis — a workload on the live cluster under a seeded schedule of faults,
then a verdict (safety, then liveness after healing) and a report

  --protocol, -p ID        protocol id (default caslock); workload flags as for bench
                           (defaults: 12 clients, 24 locks, 60 000 ms, 1 ms think, 1 ms critical
                           section, 2 000 ms acquire timeout)
  --faults LIST            comma-separated, from: ${NEMESIS_FAULTS.join(', ')}
                           (default kill,pause,partition)
  --interval-ms MS         mean fault-free gap between faults (default 6000)
  --fault-duration-ms MS   mean length of a fault (default 3000)
  --quiet-ms MS            fault-free time at the start (the baseline) and the end (default 5000)
  --seed N                 derives the schedule (and the workload); the same seed, the same schedule
  --heal-budget-ms MS      after healing, every lock must be granted within this (default 10000)
  --report DIR             where report.html, report.json, the SVGs and history.jsonl go
                           (default .lockfabric/nemesis/<protocol>-seed<N>)
  --cluster-dir D          the cluster (${DEFAULT_CLUSTER_DIR}); without one a temporary cluster is started
  --compute-nodes N        compute nodes of a temporary cluster (default 3)
  --dry-run                print the schedule and exit (with --kube-context: and its kubectl commands)
  --json                   print one JSON object
Kubernetes (the manifests of infra/k8s):
  --kube-context CTX       inject the faults with kubectl in this context; the workload runs from
                           here against --compute-nodes-at / --memory-nodes-at, as bench does
  --namespace NS           (default ${DEFAULT_KUBE_NAMESPACE})
  --compute-nodes-at LIST  compute nodes, host:port,…   --memory-nodes-at LIST  memory nodes
  --compute-memory-port P[,P…]  their descriptor-memory port, one for all or one each (50055)

Faults run one at a time; a kill is healed by a restart, a pause by a resume; a partition is a
real cut with 'cluster up --cut-proxy' (a temporary cluster has the proxy), else SIGSTOP.
Exit status: 0 safe and live, 1 an exclusion violation, 3 not live after healing, 2 bad flags,
4 an unexpected error.`;

const FLAGS = {
  ...WORKLOAD_FLAGS,
  faults: { type: 'string' },
  'interval-ms': { type: 'string' },
  'fault-duration-ms': { type: 'string' },
  'quiet-ms': { type: 'string' },
  'heal-budget-ms': { type: 'string' },
  report: { type: 'string' },
  'cluster-dir': { type: 'string' },
  'compute-nodes': { type: 'string' },
  'dry-run': { type: 'boolean' },
  'kube-context': { type: 'string' },
  namespace: { type: 'string' },
  'compute-nodes-at': { type: 'string' },
  'memory-nodes-at': { type: 'string' },
  'compute-memory-port': { type: 'string' },
} as const;

/** The `--json` object of `lockfabric nemesis`. */
export interface NemesisReport {
  readonly protocol: string;
  readonly seed: number;
  readonly command: string;
  readonly schedule: readonly PlannedFault[];
  readonly faults: readonly (AppliedFault & { readonly recoveryMs?: number })[];
  /** Planned faults not injected (earlier heals ran late, or the workload had ended), with why. */
  readonly skipped: readonly SkippedFault[];
  readonly run: BenchReport;
  readonly verdict: { readonly safety: 'ok' | 'violation'; readonly liveness: 'ok' | 'violation' | 'unchecked'; readonly exitCode: number; readonly lines: readonly string[] };
  readonly heal: { readonly actions: readonly string[]; readonly budgetMs: number; readonly acquires: number; readonly failures: number; readonly failuresByCode: Readonly<Record<string, number>>; readonly locksGranted: number; readonly locksProbed: number; readonly problems: readonly string[] };
  readonly reportDir: string;
  readonly files: readonly string[];
}

export async function nemesisCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('nemesis', argv, FLAGS);
  if (values['help']) return (console.log(NEMESIS_HELP), 0);
  const { spec, protocolOptions, reader } = readWorkload(values, { clients: 12, locks: 24, readRatio: 0, distribution: 'uniform', durationMs: 60_000, thinkNs: 1_000_000, criticalSectionNs: 1_000_000, timeoutMs: 2_000 });
  const faults = parseFaults(reader.string('faults', 'kill,pause,partition'), reader.problems);
  const intervalMs = reader.number('interval-ms', 6_000, { min: 0 });
  const faultDurationMs = reader.number('fault-duration-ms', 3_000, { min: 100 });
  const quietMs = reader.number('quiet-ms', 5_000, { min: 0 });
  const healBudgetMs = reader.number('heal-budget-ms', 10_000, { min: 100 });
  const computeNodes = reader.number('compute-nodes', 3, { integer: true, min: 2 });
  const kube = readKube(values, reader);
  for (const flag of ['compute-nodes-at', 'memory-nodes-at']) reader.problems.push(...addressListProblems(flag, values[flag]));
  if (spec.durationMs === undefined) reader.problems.push('--duration-ms: a nemesis run is bounded by time (--operations alone cannot place the faults)');
  if (spec.durationMs !== undefined && spec.durationMs < 2 * quietMs + faultDurationMs) reader.problems.push(`--duration-ms ${spec.durationMs}: too short for one fault of ~${faultDurationMs} ms between two quiet stretches of ${quietMs} ms`);
  reader.done();
  const protocol = reader.string('protocol', DEFAULT_PROTOCOL_ID);
  const out = output(values['json'] === true);
  const reportDir = reader.string('report', join('.lockfabric', 'nemesis', `${protocol}-seed${spec.seed}`));
  const command = ['lockfabric nemesis', ...workloadFlags(protocol, spec, protocolOptions), `--faults ${faults.join(',')}`, `--interval-ms ${intervalMs}`, `--fault-duration-ms ${faultDurationMs}`, `--quiet-ms ${quietMs}`, `--heal-budget-ms ${healBudgetMs}`].join(' ');

  const clusterDir = reader.string('cluster-dir', DEFAULT_CLUSTER_DIR);
  if (values['dry-run']) {
    // No cluster is started for a dry run: a temporary one (or the manifests' pods) would have these names.
    const running = kube ? undefined : (await import('../cluster/local-cluster.js')).readClusterState(clusterDir);
    const layout = running && running.processes.some((p) => isAlive(p.pid)) ? running : kube ? kubeLayout(computeNodes) : temporaryLayout(computeNodes);
    const state = checkTargets(layout, faults, kube !== undefined);
    const schedule = planSchedule({ seed: spec.seed, faults, durationMs: spec.durationMs!, intervalMs, faultDurationMs, quietMs, targets: targetsOf(state, kube !== undefined) });
    const plans = kube ? schedule.map((f) => kubeStepsOf(new KubeChaos({ ...kube.target, memoryNodes: 1 }), f)) : undefined;
    if (out.json) console.log(JSON.stringify({ protocol, seed: spec.seed, command, schedule, ...(plans ? { kubectl: plans } : {}) }));
    else
      for (const [i, f] of schedule.entries()) {
        console.log(`${f.id} +${(f.atMs / 1000).toFixed(1)} s  ${f.kind} ${f.target} for ${f.durationMs} ms`);
        for (const line of plans?.[i] ?? []) console.log(`    ${line.split('\n').join('\n    ')}`);
      }
    return 0;
  }
  // The run needs the live machinery (gRPC, NATS, the chaos tools): loaded only now, after the flags are checked.
  const { runNemesisCommand } = await import('./nemesis-run.js');
  return runNemesisCommand({ kube, clusterDir, computeNodes, faults, protocol, protocolOptions, spec, out, healBudgetMs, reportDir, command, intervalMs, faultDurationMs, quietMs });
}

export interface KubeFlags {
  readonly target: Omit<KubeTarget, 'memoryNodes'>;
  readonly computeNodesAt: string;
  readonly memoryNodesAt: string;
  readonly computeMemoryPorts: readonly number[];
}

/** The Kubernetes flags, all problems listed; undefined without --kube-context. */
function readKube(values: Record<string, unknown>, reader: FlagReader): KubeFlags | undefined {
  const context = values['kube-context'];
  const remoteFlags = ['namespace', 'compute-nodes-at', 'memory-nodes-at', 'compute-memory-port'];
  if (context === undefined) {
    for (const flag of remoteFlags) if (values[flag] !== undefined) reader.problems.push(`--${flag} applies with --kube-context only`);
    return undefined;
  }
  if (typeof context !== 'string' || context.trim() === '') reader.problems.push('--kube-context: expected a context name');
  const namespace = reader.string('namespace', DEFAULT_KUBE_NAMESPACE);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)) reader.problems.push(`--namespace: ${JSON.stringify(namespace)} is not a Kubernetes namespace name`);
  const computeNodesAt = reader.string('compute-nodes-at', '');
  const memoryNodesAt = reader.string('memory-nodes-at', '');
  if (values['dry-run'] !== true && (computeNodesAt === '' || memoryNodesAt === '')) reader.problems.push('--kube-context: the workload needs --compute-nodes-at and --memory-nodes-at (the nodes as this machine reaches them)');
  if (values['cluster-dir'] !== undefined) reader.problems.push('--cluster-dir is a local cluster; with --kube-context the nodes come from --compute-nodes-at');
  const computeMemoryPorts = reader.portList('compute-memory-port', [50055]);
  return { target: { context: String(context), namespace }, computeNodesAt, memoryNodesAt, computeMemoryPorts };
}

/** The kubectl lines a fault will run, step by step, for the dry run. */
function kubeStepsOf(kube: KubeChaos, fault: PlannedFault): string[] {
  switch (fault.kind) {
    case 'kill':
    case 'coordinator-kill':
      return [...kube.plan('kill', fault.target), `sleep ${(fault.durationMs / 1000).toFixed(3)}`, `# the controller's replacement pod: wait until Ready`];
    case 'pause':
      return [...kube.plan('pause', fault.target), `sleep ${(fault.durationMs / 1000).toFixed(3)}`, ...kube.plan('resume', fault.target)];
    case 'partition':
      return kube.plan('partition', fault.target, { durationMs: fault.durationMs });
    case 'restart':
    case 'memory-restart':
    case 'switch-restart':
      return kube.plan('restart', fault.target);
    case 'nats-restart':
      return kube.plan('nats-restart', 'nats');
    default:
      return [
        ...kube.plan('switch-faults', fault.target, { faults: { ...SWITCH_PACKET_FAULTS[fault.kind]!, clear: false } }),
        `sleep ${(fault.durationMs / 1000).toFixed(3)}`,
        ...kube.plan('switch-faults', fault.target, { faults: { loss: 0, duplicate: 0, reorder: 0, delayNs: 0, clear: true } }),
      ];
  }
}

/** Every fault's target must exist in the cluster; problems are listed together (exit 2). */
export function checkTargets(state: ClusterState, faults: readonly NemesisFault[], onKube: boolean): ClusterState {
  const problems: string[] = [];
  // On Kubernetes the manifests always deploy the switch, the coordinator and NATS.
  const has = (role: string) => onKube || state.processes.some((p) => p.role === role);
  if (faults.some((f) => SWITCH_FAULTS.has(f)) && !has('switch')) problems.push('--faults: switch faults need a switch-dataplane in the cluster');
  if (faults.includes('coordinator-kill') && !has('coordinator')) problems.push('--faults: coordinator-kill needs a coordinator in the cluster');
  if (faults.includes('nats-restart') && !has('nats')) problems.push('--faults: nats-restart needs the cluster to run its own nats-server (not NATS_URL)');
  // A compute node found down at discovery (a remote cluster) is no target and no survivor either.
  const computes = state.processes.filter((p) => p.role === 'compute' && downAtDiscovery(p) === undefined).length;
  if (computes < 2 && faults.some((f) => COMPUTE_FAULTS.has(f))) problems.push(`--faults: compute-node faults need at least two compute nodes that answer (one must survive); found ${computes}`);
  if (problems.length > 0) throw new ConfigError(problems);
  return state;
}

/**
 * Compute-node faults spare the lowest compute node: some protocols' lock server lives there
 * (srvlock). A node found down at discovery is no target: its id (and so its pod) is unknown.
 */
export function targetsOf(state: ClusterState, onKube: boolean): Parameters<typeof planSchedule>[0]['targets'] {
  const name = (role: string) => state.processes.find((p) => p.role === role)?.name;
  const computes = state.processes.filter((p) => p.role === 'compute' && downAtDiscovery(p) === undefined).sort((a, b) => a.node - b.node);
  return {
    compute: computes.slice(1).map((p) => p.name),
    ...optional('memory', name('memory')),
    ...optional('switch', name('switch') ?? (onKube ? 'switch' : undefined)),
    ...optional('coordinator', name('coordinator') ?? (onKube ? 'coordinator' : undefined)),
    ...optional('nats', name('nats') ?? (onKube ? 'nats' : undefined)),
  };
}

/** The manifests' node ids for a dry run: memory node 0, compute nodes 1…N (infra/k8s/overlays/dev). */
function kubeLayout(computeNodes: number): ClusterState {
  const record = (name: string, role: ClusterState['processes'][number]['role'], node: number) => ({ name, role, node, pid: 0, log: '', argv: [] });
  return { cluster: 'kubernetes', natsUrl: '', startedAt: '', processes: [record('memory-0', 'memory', 0), ...Array.from({ length: computeNodes }, (_, i) => record(`compute-${i + 1}`, 'compute', i + 1))] };
}

/** The processes of a temporary cluster (startLocalCluster's numbering), for a dry run without one. */
function temporaryLayout(computeNodes: number): ClusterState {
  const record = (name: string, role: ClusterState['processes'][number]['role'], node: number) => ({ name, role, node, pid: 0, log: '', argv: [] });
  return {
    cluster: 'local',
    natsUrl: '',
    startedAt: '',
    processes: [
      record('nats', 'nats', -1),
      record('memory-0', 'memory', 0),
      ...Array.from({ length: computeNodes }, (_, i) => record(`compute-${i + 1}`, 'compute', i + 1)),
      record(`switch-${computeNodes + 1}`, 'switch', computeNodes + 1),
      record(`coordinator-${computeNodes + 2}`, 'coordinator', computeNodes + 2),
    ],
  };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
