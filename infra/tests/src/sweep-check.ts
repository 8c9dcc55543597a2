import type { Doc } from './yaml-docs.js';

interface SweepContainer {
  readonly args?: readonly string[];
  readonly volumeMounts?: readonly { name: string; mountPath: string }[];
}

/**
 * What a sweep Job needs beyond a valid Job: Indexed completion (Kubernetes then gives each pod
 * JOB_COMPLETION_INDEX, its shard), one completion per shard, and the shard files' directory on
 * a PersistentVolumeClaim (an emptyDir would vanish with the pod, and the merge would find nothing).
 */
export function sweepJobProblems(job: Doc): string[] {
  const problems: string[] = [];
  const spec = (job['spec'] ?? {}) as Doc;
  const pod = ((spec['template'] as Doc | undefined)?.['spec'] ?? {}) as { containers?: SweepContainer[]; volumes?: { name: string; persistentVolumeClaim?: unknown }[] };
  const args = pod.containers?.[0]?.args ?? [];
  const flag = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (args.slice(0, 3).join(' ') !== 'lockfabric sweep run') problems.push(`args start ${JSON.stringify(args.slice(0, 3))}, not lockfabric sweep run`);
  if (spec['completionMode'] !== 'Indexed') problems.push('completionMode is not Indexed: the pods get no JOB_COMPLETION_INDEX, so no shard');
  if (flag('index') !== undefined) problems.push('--index is fixed in the template: every pod would run the same shard');
  if (String(spec['completions']) !== flag('shards')) problems.push(`completions ${String(spec['completions'])} differ from --shards=${String(flag('shards'))}: shards would be missing or repeated`);
  const out = flag('out');
  const mount = pod.containers?.[0]?.volumeMounts?.find((m) => m.mountPath === out);
  const volume = pod.volumes?.find((v) => v.name === mount?.name);
  if (!volume?.persistentVolumeClaim) problems.push(`--out=${String(out)} is not on a PersistentVolumeClaim: the shard files die with their pods`);
  return problems;
}
