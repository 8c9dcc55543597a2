import { CONFIG_FILE_ENV, configFileSchema, loadConfig } from '@lockfabric/config';
import type { Config, NodeRole } from '@lockfabric/config';
import { nameOf, podSpecOf, templateOf } from './kustomize.js';
import type { Doc } from './yaml-docs.js';

/** The image's apps (first container argument) and the config role each runs as. */
export const APP_ROLES: Readonly<Record<string, NodeRole>> = { 'memory-node': 'memory', 'compute-node': 'compute', 'switch-dataplane': 'switch', coordinator: 'coordinator' };

interface Container {
  name: string;
  image?: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path?: string; port: number | string } };
  livenessProbe?: { httpGet?: { path?: string; port: number | string } };
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; runAsNonRoot?: boolean; runAsUser?: number };
}

export interface Pod {
  readonly owner: Doc;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly spec: Doc;
  readonly containers: readonly Container[];
}

/** Every pod the objects would create, named as the controller names them (StatefulSet: set-ordinal). */
export function podsOf(objects: readonly Doc[]): Pod[] {
  return objects.flatMap((o) => {
    const spec = podSpecOf(o);
    if (!spec) return [];
    const labels = ((templateOf(o)?.['metadata'] as Doc | undefined)?.['labels'] ?? {}) as Record<string, string>;
    const replicas = o['kind'] === 'Job' ? 1 : Number((o['spec'] as Doc)['replicas'] ?? 1);
    const names = o['kind'] === 'StatefulSet' ? Array.from({ length: replicas }, (_, i) => `${nameOf(o)}-${i}`) : Array.from({ length: replicas }, (_, i) => `${nameOf(o)}-pod${i}`);
    return names.map((name) => ({ owner: o, name, labels, spec, containers: spec['containers'] as Container[] }));
  });
}

/** Probes, requests and limits, non-root, read-only root filesystem, no privilege escalation. */
export function hardeningProblems(objects: readonly Doc[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const spec = podSpecOf(o);
    if (!spec) continue;
    const podContext = (spec['securityContext'] ?? {}) as Container['securityContext'] & object;
    for (const c of spec['containers'] as Container[]) {
      const where = `${String(o['kind'])}/${nameOf(o)} container ${c.name}`;
      if (o['kind'] === 'Job') {
        if (typeof (o['spec'] as Doc)['activeDeadlineSeconds'] !== 'number') problems.push(`${where}: a Job needs activeDeadlineSeconds (it has no probes)`);
      } else {
        if (!c.readinessProbe) problems.push(`${where}: no readinessProbe`);
        if (!c.livenessProbe) problems.push(`${where}: no livenessProbe`);
      }
      for (const kind of ['requests', 'limits'] as const) for (const resource of ['cpu', 'memory']) if (c.resources?.[kind]?.[resource] === undefined) problems.push(`${where}: no ${resource} ${kind}`);
      const nonRoot = c.securityContext?.runAsNonRoot ?? podContext.runAsNonRoot;
      const user = c.securityContext?.runAsUser ?? podContext.runAsUser;
      if (nonRoot !== true) problems.push(`${where}: runAsNonRoot is not true`);
      if (user === 0) problems.push(`${where}: runs as uid 0`);
      if (c.securityContext?.readOnlyRootFilesystem !== true) problems.push(`${where}: root filesystem is writable`);
      if (c.securityContext?.allowPrivilegeEscalation !== false) problems.push(`${where}: privilege escalation is not disabled`);
    }
  }
  return problems;
}

const appOf = (c: Container): string | undefined => (c.args?.[0] !== undefined && c.args[0] in APP_ROLES ? c.args[0] : undefined);

/** The environment a container would see, with Secret and downward-API values resolved. */
export function containerEnv(objects: readonly Doc[], pod: Pod, c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    const secretRef = e.valueFrom?.secretKeyRef;
    if (secretRef) {
      const secret = objects.find((o) => o['kind'] === 'Secret' && nameOf(o) === secretRef.name);
      const value = ((secret?.['stringData'] ?? {}) as Record<string, string>)[secretRef.key];
      if (value === undefined) throw new Error(`${pod.name}: ${e.name} refers to missing secret key ${secretRef.name}/${secretRef.key}`);
      env[e.name] = value;
    }
    if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = pod.name;
  }
  return env;
}

export type MachineIdFn = (env: Record<string, string | undefined>, hostname: string) => number | undefined;

export interface AppInstance {
  readonly pod: Pod;
  readonly app: string;
  readonly config: Config;
  readonly container: Container;
}

/**
 * Loads every app container's configuration exactly as the app would (ConfigMap file, env, flags,
 * machine id from the entry point), collecting each ConfigError as a problem.
 */
export function loadAppConfigs(objects: readonly Doc[], machineId: MachineIdFn, machineRack?: MachineIdFn): { instances: AppInstance[]; problems: string[] } {
  const instances: AppInstance[] = [];
  const problems: string[] = [];
  const files = configMapFiles(objects);
  for (const pod of podsOf(objects)) {
    for (const c of pod.containers) {
      const app = appOf(c);
      if (!app) continue;
      try {
        const env = containerEnv(objects, pod, c);
        const id = machineId(env, pod.name);
        if (id !== undefined) env['LOCKFABRIC_NODE_ID'] = String(id);
        // as the image's entry point does (infra/docker/machine-id.mjs applyMachineRack)
        const rack = machineRack?.(env, pod.name);
        if (rack !== undefined) for (const key of ['LOCKFABRIC_NODE_RACK', 'LOCKFABRIC_SWITCH_RACK']) env[key] ??= String(rack);
        const config = loadConfig({
          role: APP_ROLES[app]!,
          argv: c.args!.slice(1),
          env,
          readText: (path) => {
            const text = files.get(path);
            if (text === undefined) throw Object.assign(new Error(`no ConfigMap mounted at ${path}`), { code: 'ENOENT' });
            return text;
          },
        });
        if (env[CONFIG_FILE_ENV] !== undefined && !files.has(env[CONFIG_FILE_ENV])) problems.push(`${pod.name}: ${CONFIG_FILE_ENV} points at no mounted ConfigMap file`);
        instances.push({ pod, app, config, container: c });
      } catch (error) {
        problems.push(`${pod.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  return { instances, problems };
}

/** ConfigMap files by the path they are mounted at in the app pods (all apps mount the same). */
function configMapFiles(objects: readonly Doc[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const pod of podsOf(objects)) {
    const volumes = (pod.spec['volumes'] ?? []) as { name: string; configMap?: { name: string } }[];
    for (const c of pod.containers as (Container & { volumeMounts?: { name: string; mountPath: string }[] })[]) {
      for (const mount of c.volumeMounts ?? []) {
        const source = volumes.find((v) => v.name === mount.name)?.configMap;
        if (!source) continue;
        const configMap = objects.find((o) => o['kind'] === 'ConfigMap' && nameOf(o) === source.name);
        for (const [file, text] of Object.entries((configMap?.['data'] ?? {}) as Record<string, string>)) files.set(`${mount.mountPath}/${file}`, text);
      }
    }
  }
  return files;
}

/** Every ConfigMap's JSON file validated against the one config schema, strictly. */
export function configMapProblems(objects: readonly Doc[]): string[] {
  return objects
    .filter((o) => o['kind'] === 'ConfigMap')
    .flatMap((o) =>
      Object.entries((o['data'] ?? {}) as Record<string, string>).flatMap(([file, text]) => {
        const result = configFileSchema.safeParse(JSON.parse(text));
        return result.success ? [] : result.error.issues.map((i) => `ConfigMap ${nameOf(o)} ${file}: ${i.path.join('.')}: ${i.message}`);
      }),
    );
}

/** Machine ids: one per app pod, all different. */
export function machineIdProblems(instances: readonly AppInstance[]): string[] {
  const byId = new Map<number, string>();
  const problems: string[] = [];
  for (const { pod, config } of instances) {
    const other = byId.get(config.node.id);
    if (other !== undefined) problems.push(`machine id ${config.node.id} is used by ${other} and ${pod.name}`);
    byId.set(config.node.id, pod.name);
  }
  return problems;
}

/** Ports the config makes an app listen on must be container ports; probes must hit the health port. */
export function portProblems(instances: readonly AppInstance[]): string[] {
  const problems: string[] = [];
  for (const { pod, app, config, container } of instances) {
    const listens = { 'memory-node': [config.memory.grpcPort], 'compute-node': [config.compute.grpcPort, config.compute.memoryGrpcPort], 'switch-dataplane': [config.switch.grpcPort], coordinator: [config.coordinator.grpcPort] }[app] ?? [];
    const declared = new Map((container.ports ?? []).map((p) => [p.name ?? String(p.containerPort), p.containerPort]));
    for (const port of [...listens, config.health.port]) if (![...declared.values()].includes(port)) problems.push(`${pod.name}: listens on ${port}, not a container port`);
    for (const probe of [container.readinessProbe, container.livenessProbe]) {
      const port = probe?.httpGet?.port;
      const number = typeof port === 'string' ? declared.get(port) : port;
      if (number !== config.health.port) problems.push(`${pod.name}: a probe targets ${String(port)}, not the health port ${config.health.port}`);
    }
  }
  return problems;
}

/**
 * `host:port` references (compute.memoryNodes, the workload's node lists) must name a pod that
 * exists (`<set>-<i>.<service>`) and a port that pod's app listens on for that purpose.
 */
export function addressProblems(objects: readonly Doc[], instances: readonly AppInstance[]): string[] {
  const problems: string[] = [];
  const byDns = new Map(instances.map((i) => [`${i.pod.name}.${String((i.pod.owner['spec'] as Doc)['serviceName'] ?? '')}`, i]));
  const expect = (where: string, address: string, app: string, port: (c: Config) => number) => {
    const [host, portText] = address.split(':');
    const target = byDns.get(host ?? '');
    if (!target) return void problems.push(`${where}: ${address} names no pod`);
    if (target.app !== app) return void problems.push(`${where}: ${address} is a ${target.app}, expected a ${app}`);
    if (Number(portText) !== port(target.config)) problems.push(`${where}: ${address} uses port ${portText}, the ${app} listens on ${port(target.config)}`);
  };
  for (const i of instances) if (i.app === 'compute-node') for (const a of i.config.compute.memoryNodes) expect(`${i.pod.name} compute.memoryNodes`, a, 'memory-node', (c) => c.memory.grpcPort);
  const memoryIds = new Set(instances.filter((i) => i.app === 'memory-node').map((i) => i.pod.name));
  for (const i of instances.filter((x) => x.app === 'compute-node')) {
    const listed = new Set(i.config.compute.memoryNodes.map((a) => a.split('.')[0]));
    if (listed.size !== memoryIds.size || [...memoryIds].some((m) => !listed.has(m))) problems.push(`${i.pod.name}: compute.memoryNodes does not list exactly the memory node pods`);
  }
  // The coordinator declares an expected compute node it never hears dead: it must expect exactly the pods there are.
  const computeIds = instances.filter((i) => i.app === 'compute-node').map((i) => String(i.config.node.id)).sort();
  for (const i of instances.filter((x) => x.app === 'coordinator')) {
    const expected = [...(i.config.coordinator.computeNodes ?? [])].sort();
    if (expected.join(',') !== computeIds.join(',')) problems.push(`${i.pod.name}: coordinator.computeNodes [${expected.join(', ')}] is not the compute node pods' ids [${computeIds.join(', ')}]`);
  }
  for (const pod of podsOf(objects)) {
    for (const c of pod.containers) {
      if (c.args?.[0] !== 'lockfabric') continue;
      const flag = (name: string) => c.args?.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
      for (const a of (flag('compute-nodes-at') ?? '').split(',').filter(Boolean)) expect(`${pod.name} --compute-nodes-at`, a, 'compute-node', (cfg) => cfg.compute.grpcPort);
      for (const a of (flag('memory-nodes-at') ?? '').split(',').filter(Boolean)) expect(`${pod.name} --memory-nodes-at`, a, 'memory-node', (cfg) => cfg.memory.grpcPort);
      const computes = instances.filter((i) => i.app === 'compute-node');
      if ((flag('compute-nodes-at') ?? '').split(',').filter(Boolean).length !== computes.length) problems.push(`${pod.name}: --compute-nodes-at does not list every compute node`);
      const memoryPort = Number(flag('compute-memory-port') ?? 50055);
      for (const i of computes) if (i.config.compute.memoryGrpcPort !== memoryPort) problems.push(`${pod.name}: --compute-memory-port ${memoryPort} but ${i.pod.name} serves descriptors on ${i.config.compute.memoryGrpcPort}`);
    }
  }
  return problems;
}
