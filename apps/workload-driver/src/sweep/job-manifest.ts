// The Kubernetes Indexed Job that runs a sweep's shards in parallel pods (`lockfabric sweep job`).
import type { SweepPlan } from './shards.js';

export interface SweepJobOptions {
  readonly plan: SweepPlan;
  /** Job name (a DNS label). */
  readonly name: string;
  /** The LockFabric image (infra/docker/Dockerfile); its entrypoint runs `lockfabric`. */
  readonly image: string;
  /** PersistentVolumeClaim (ReadWriteMany) every pod writes its shard file to, mounted at /results. */
  readonly resultsClaim: string;
  /** Pods running at once (default: every shard). */
  readonly parallelism?: number;
  readonly namespace?: string;
}

export const RESULTS_DIR = '/results';

/**
 * One pod per shard: Kubernetes sets JOB_COMPLETION_INDEX in each pod of an Indexed Job, and
 * `sweep run` takes the shard of that index. A shard is a pure simulation (no NATS, no peers), so
 * the pod needs no certificates and no network; `sweep merge /results` afterwards gives the result.
 */
export function sweepJob(options: SweepJobOptions): Record<string, unknown> {
  const { plan } = options;
  const labels = { 'app.kubernetes.io/name': 'sweep', 'app.kubernetes.io/component': 'lockfabric-sweep', 'lockfabric.io/sweep': options.name };
  const args = [
    'lockfabric',
    'sweep',
    'run',
    `--protocol=${plan.protocols.join(',')}`,
    `--seeds=${plan.seeds}`,
    `--first-seed=${plan.firstSeed}`,
    `--shards=${plan.shards}`,
    ...Object.entries(plan.options).map(([k, v]) => `--opt=${k}=${String(v)}`),
    `--out=${RESULTS_DIR}`,
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: options.name, ...(options.namespace ? { namespace: options.namespace } : {}), labels },
    spec: {
      completionMode: 'Indexed',
      completions: plan.shards,
      parallelism: options.parallelism ?? plan.shards,
      // A failed shard is rerun; its file is rewritten whole, so a retry cannot leave half a result.
      backoffLimit: 2 * plan.shards,
      // A Job has no probes; this bounds a shard that hangs.
      activeDeadlineSeconds: 86_400,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'sweep',
              image: options.image,
              args,
              // One simulation runs on one core.
              resources: { requests: { cpu: '1', memory: '512Mi' }, limits: { cpu: '1', memory: '2Gi' } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'results', mountPath: RESULTS_DIR },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: 'results', persistentVolumeClaim: { claimName: options.resultsClaim } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}
