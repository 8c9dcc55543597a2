import { parseCommandArgs } from '../cli/args.js';
import { chaosRequestFrom } from '../chaos/chaos-request.js';
import type { ChaosFlags, ChaosRequest } from '../chaos/chaos-request.js';
import { kubePlan } from '../chaos/kube-plan.js';
import { LocalChaos } from '../chaos/local-chaos.js';
import type { ChaosOutcome } from '../chaos/local-chaos.js';
import { DEFAULT_CLUSTER_DIR } from './context.js';
import { ConfigError, errorMessage } from '@lockfabric/ports';

export const CHAOS_HELP = `lockfabric chaos <verb> <target> — break a running cluster on purpose

verbs (targets are process names from cluster.json: compute-2, memory-0, switch-4, coordinator-5, nats)
  kill TARGET            SIGKILL (a crash)
  pause TARGET           SIGSTOP (the process freezes; peers see silence)
  resume TARGET          SIGCONT
  restart TARGET         stop it if running, start it again with its recorded argv, wait until
                         ready; cluster.json gets the new pid (a memory node restarts empty)
  partition TARGET       cut TARGET off for --duration-ms, then heal. Locally the cluster's cut proxy
                         stops TARGET's NATS and data-plane gRPC connections both ways without
                         closing them; TARGET keeps running and its late traffic lands after the
                         heal (start the cluster with \`cluster up --cut-proxy\`). Clusters
                         without the proxy fall back to SIGSTOP/SIGCONT (its own timers stall too). On Kubernetes: a deny-all NetworkPolicy
                         With --subjects P[,P…] (local, cut proxy only) the partition is partial: only
                         NATS deliveries to TARGET on those subjects are dropped (patterns under the
                         cluster's prefix, e.g. ctl.fiss.2.>); it keeps heartbeating — a gray failure
  switch-faults [switch-N] --loss P --duplicate P --reorder P --delay-ns NS [--delay-max-ns NS]
                         [--packet-type T] [--machine M] [--direction egress|ingress|both] | --clear
                         replace the switch's packet faults (SwitchControl). --direction: egress
                         (default) acts on copies leaving the switch; ingress on packets from the
                         machines before the program sees them (lost: never decided; duplicated:
                         decided twice); both: either link, each with its own draws
  nats-restart           restart nats-server on its port; services reconnect

flags
  --dir DIR              local cluster state (default ${DEFAULT_CLUSTER_DIR})
  --duration-ms MS       partition length (default 5000)
  --subjects P[,P…]      partition: drop only NATS deliveries on these subject patterns
  --switch-grpc HOST:P   switch-faults: this SwitchControl address instead of cluster.json's
  --kube-context CTX     act on Kubernetes through kubectl, on the pods of infra/k8s
  --namespace NS         with --kube-context (default lockfabric)
  --memory-nodes N       with --kube-context: memory nodes before the compute ids (default 1;
                         compute-N is pod compute-node-(N−memory nodes)); pod names work too
  --dry-run              with --kube-context: print the kubectl commands, run nothing
  --json                 print one JSON object`;

export const CHAOS_FLAGS = {
  dir: { type: 'string' },
  'duration-ms': { type: 'string' },
  subjects: { type: 'string' },
  loss: { type: 'string' },
  duplicate: { type: 'string' },
  reorder: { type: 'string' },
  'delay-ns': { type: 'string' },
  'delay-max-ns': { type: 'string' },
  direction: { type: 'string' },
  'packet-type': { type: 'string' },
  machine: { type: 'string' },
  clear: { type: 'boolean' },
  'switch-grpc': { type: 'string' },
  'kube-context': { type: 'string' },
  namespace: { type: 'string' },
  'memory-nodes': { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Parses `lockfabric chaos` arguments into a validated request (throws ConfigError listing every problem). */
export function parseChaosArgs(argv: readonly string[]): ChaosRequest {
  const values = parseCommandArgs('chaos', argv, CHAOS_FLAGS);
  return chaosRequestFrom(values as unknown as ChaosFlags, DEFAULT_CLUSTER_DIR);
}

/** `lockfabric chaos …`; exit 0 on success, 2 on usage errors (ConfigError, via main), 1 when the action failed. */
export async function chaosCommand(argv: readonly string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    console.log(CHAOS_HELP);
    return argv.length === 0 ? 2 : 0;
  }
  const request = parseChaosArgs(argv);
  if (request.kube) {
    const commands = kubePlan(request);
    if (request.dryRun) {
      if (request.json) console.log(JSON.stringify({ verb: request.verb, target: request.target, commands }));
      else console.log(commands.join('\n'));
      return 0;
    }
    return runShell(commands);
  }
  let outcome: ChaosOutcome;
  try {
    outcome = await runLocal(new LocalChaos(request.dir), request);
  } catch (error) {
    console.error(`lockfabric chaos ${request.verb}: ${errorMessage(error)}`);
    return 1;
  }
  console.log(request.json ? JSON.stringify(outcome) : outcome.detail);
  return 0;
}

export function runLocal(chaos: LocalChaos, request: ChaosRequest): Promise<ChaosOutcome> {
  switch (request.verb) {
    case 'kill':
      return chaos.kill(request.target);
    case 'pause':
      return chaos.pause(request.target);
    case 'resume':
      return chaos.resume(request.target);
    case 'restart':
      return chaos.restart(request.target);
    case 'partition':
      return chaos.partition(request.target, request.durationMs, request.subjects);
    case 'nats-restart':
      return chaos.natsRestart();
    case 'switch-faults':
      if (!request.faults) throw new ConfigError(['switch-faults needs --loss, --duplicate, --reorder or --delay-ns (or --clear)']);
      return chaos.switchFaults(request.target, request.faults, request.switchGrpc);
  }
}

/** Runs the kubectl plan as one shell script (later lines may use earlier variables), stopping at the first failure. */
async function runShell(commands: readonly string[]): Promise<number> {
  const { spawnSync } = await import('node:child_process');
  const result = spawnSync('sh', ['-c', ['set -e', ...commands].join('\n')], { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`lockfabric chaos: kubectl plan failed (exit ${result.status ?? result.signal}); run it with --dry-run to see the commands`);
    return 1;
  }
  return 0;
}
