import { ConfigError } from '@lockfabric/ports';
import type { ChaosRequest } from './chaos-request.js';

/** Labels the manifests in infra/k8s give every pod: its app, and (StatefulSets) its own pod name. */
export const APP_LABEL = 'app.kubernetes.io/name';
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** The service container of a pod; its entrypoint runs the service under an init (tini), so the service is not PID 1. */
export const SERVICE_CONTAINER = 'lockfabric';
/** Marks the NetworkPolicies a partition creates, so healing can remove any left behind. */
export const PARTITION_LABEL = 'lockfabric.io/partition';

/**
 * The pod selector of a chaos target, so a target means the same process locally and on Kubernetes.
 * Node ids follow the manifests: memory node N is pod memory-node-N; compute node N is pod
 * compute-node-(N − memory nodes) (LF_NODE_ID_BASE). Pod names (`compute-node-1`) are taken as they are.
 */
export function kubeSelector(target: string, memoryNodes: number): string {
  if (/^(?:compute|memory)-node-\d+$/.test(target)) return `${POD_NAME_LABEL}=${target}`;
  const node = /^(compute|memory)-(\d+)$/.exec(target);
  if (node) {
    const ordinal = node[1] === 'compute' ? Number(node[2]) - memoryNodes : Number(node[2]);
    if (ordinal < 0) throw new ConfigError([`${target}: compute node ids start at ${memoryNodes} (after ${memoryNodes} memory node(s); --memory-nodes says how many)`]);
    return `${POD_NAME_LABEL}=${node[1]}-node-${ordinal}`;
  }
  if (/^switch(?:-\d+)?$/.test(target)) return `${APP_LABEL}=switch-dataplane`;
  if (/^coordinator(?:-\d+)?$/.test(target)) return `${APP_LABEL}=coordinator`;
  if (target === 'nats') return `${APP_LABEL}=nats`;
  throw new ConfigError([`${target}: not a LockFabric process (compute-N, memory-N, switch, coordinator, nats, or a pod name)`]);
}

/**
 * The kubectl commands for one chaos action, as shell lines in order. Pure, so `--dry-run` output
 * is tested without a cluster. Mapping to the local verbs:
 * - kill: force-delete the pod (no grace: the process gets SIGKILL); its controller starts a new one;
 * - pause/resume: SIGSTOP/SIGCONT the service process inside the container. The kernel ignores
 *   SIGSTOP sent to a PID namespace's init, hence the init requirement above;
 * - restart: graceful delete, then wait until the replacement is Ready;
 * - partition: a NetworkPolicy that denies all ingress and egress of the pod (NATS and gRPC both),
 *   removed after the duration. It takes effect only where the CNI enforces NetworkPolicy;
 * - switch-faults: port-forward SwitchControl and call SetFaults through it;
 * - nats-restart: delete the NATS pod; services reconnect to its replacement.
 */
export function kubePlan(request: ChaosRequest): string[] {
  if (!request.kube) throw new ConfigError(['kubePlan needs a request with --kube-context']);
  const { namespace } = request.kube;
  const kubectl = kubectlOf(request.kube);
  const selector = kubeSelector(request.target, request.kube.memoryNodes ?? 1);
  const pod = `$(${kubectl} get pod -l ${selector} -o name)`;
  const signal = (name: string) => `${kubectl} exec ${pod} -c ${SERVICE_CONTAINER} -- sh -c 'kill -${name} $(pidof node)'`;
  switch (request.verb) {
    case 'kill':
      return [`${kubectl} delete pod -l ${selector} --grace-period=0 --force --wait=false`];
    case 'pause':
      return [signal('STOP')];
    case 'resume':
      return [signal('CONT')];
    case 'restart':
      return [`${kubectl} delete pod -l ${selector} --wait=true`, `${kubectl} wait --for=condition=Ready pod -l ${selector} --timeout=120s`];
    case 'partition': {
      const name = `lockfabric-partition-${request.target}`;
      return [
        `${kubectl} apply -f - <<'EOF'\n${partitionPolicy(name, namespace, selector)}EOF`,
        `sleep ${(request.durationMs / 1_000).toFixed(3)}`,
        `${kubectl} delete networkpolicy ${name}`,
      ];
    }
    case 'switch-faults': {
      const faults = request.faults;
      const flags = !faults || faults.clear
        ? ['--clear']
        : [
            ...(faults.loss > 0 ? [`--loss ${faults.loss}`] : []),
            ...(faults.duplicate > 0 ? [`--duplicate ${faults.duplicate}`] : []),
            ...(faults.reorder > 0 ? [`--reorder ${faults.reorder}`] : []),
            ...(faults.delayNs > 0 ? [`--delay-ns ${faults.delayNs}`] : []),
            ...(faults.delayMaxNs !== undefined ? [`--delay-max-ns ${faults.delayMaxNs}`] : []),
            ...(faults.direction !== undefined ? [`--direction ${faults.direction}`] : []),
            ...(faults.packetType ? [`--packet-type ${faults.packetType}`] : []),
            ...(faults.machine !== undefined ? [`--machine ${faults.machine}`] : []),
          ];
      return [
        `${kubectl} port-forward ${pod} ${LOCAL_FORWARD_PORT}:grpc >/dev/null & PF=$!`,
        'sleep 2',
        `lockfabric chaos switch-faults --switch-grpc 127.0.0.1:${LOCAL_FORWARD_PORT} ${flags.join(' ')}`,
        'kill $PF',
      ];
    }
    case 'nats-restart':
      return [`${kubectl} delete pod -l ${APP_LABEL}=nats --wait=true`, `${kubectl} wait --for=condition=Ready pod -l ${APP_LABEL}=nats --timeout=120s`];
  }
}

/** The kubectl invocation every line of a plan starts with. */
export function kubectlOf(kube: { readonly context: string; readonly namespace: string }): string {
  return `kubectl --context ${quote(kube.context)} -n ${kube.namespace}`;
}

/** Local end of the SwitchControl port-forward (the pod's container port is named `grpc`). */
export const LOCAL_FORWARD_PORT = 15053;

function partitionPolicy(name: string, namespace: string, selector: string): string {
  const [key, value] = selector.split('=');
  return [
    'apiVersion: networking.k8s.io/v1',
    'kind: NetworkPolicy',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    '  labels:',
    `    ${PARTITION_LABEL}: "true"`,
    'spec:',
    '  podSelector:',
    '    matchLabels:',
    `      ${key}: ${value}`,
    '  policyTypes: [Ingress, Egress]',
    '  ingress: []',
    '  egress: []',
    '',
  ].join('\n');
}

/** Contexts may hold characters a shell interprets; quote unless plainly safe. */
function quote(text: string): string {
  return /^[A-Za-z0-9_./:@-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
