import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  INFRA_DIR,
  KustomizeError,
  addressProblems,
  configMapProblems,
  hardeningProblems,
  loadAppConfigs,
  machineIdProblems,
  networkProblems,
  portProblems,
  renderKustomization,
  strategicMerge,
  validateObject,
} from '../src/index.js';
import type { Flow } from '../src/index.js';
import type { Doc } from '../src/yaml-docs.js';

type MachineId = (env: Record<string, string | undefined>, hostname: string) => number | undefined;
const machineIdModule = join(INFRA_DIR, 'docker', 'machine-id.mjs');
const { machineId } = (await import(machineIdModule)) as { machineId: MachineId };

const overlay = (name: string) => renderKustomization(join(INFRA_DIR, 'k8s', 'overlays', name));
const clone = (objects: Doc[]) => JSON.parse(JSON.stringify(objects)) as Doc[];
const find = (objects: Doc[], kind: string, name: string) => objects.find((o) => o['kind'] === kind && (o['metadata'] as Doc)['name'] === name)!;
const firstContainer = (o: Doc) => (((o['spec'] as Doc)['template'] as Doc)['spec'] as { containers: Doc[] }).containers[0]!;

const APPS = ['memory-node', 'compute-node', 'switch-dataplane', 'coordinator'];
const REQUIRED: Flow[] = [
  ...APPS.map((from) => ({ from, to: 'nats', port: 4222 })),
  ...APPS.map((from) => ({ from, to: 'jaeger', port: 4318 })),
  { from: 'compute-node', to: 'memory-node', port: 50051 },
  { from: 'compute-node', to: 'compute-node', port: 50055 },
  { from: 'workload', to: 'compute-node', port: 50052 },
  { from: 'workload', to: 'compute-node', port: 50055 },
  { from: 'workload', to: 'memory-node', port: 50051 },
  { from: 'coordinator', to: 'switch-dataplane', port: 50053 },
];
const FORBIDDEN: Flow[] = [
  { from: 'memory-node', to: 'compute-node', port: 50052 },
  { from: 'workload', to: 'nats', port: 4222 },
  { from: 'compute-node', to: 'coordinator', port: 50054 },
  { from: 'jaeger', to: 'memory-node', port: 50051 },
];

describe.each(['dev', 'bench'])('overlay %s', (name) => {
  const objects = overlay(name);
  const { instances, problems } = loadAppConfigs(objects, machineId);

  it('renders NATS, Jaeger, the services, the workload Job, one ConfigMap and NetworkPolicies in one namespace', () => {
    const kinds = objects.map((o) => `${String(o['kind'])}/${String((o['metadata'] as Doc)['name'])}`);
    for (const expected of ['StatefulSet/nats', 'Deployment/jaeger', 'StatefulSet/memory-node', 'StatefulSet/compute-node', 'StatefulSet/switch-dataplane', 'Deployment/coordinator', 'Job/workload', 'ConfigMap/lockfabric-config', 'NetworkPolicy/default-deny-ingress']) {
      expect(kinds).toContain(expected);
    }
    expect(objects.filter((o) => o['kind'] === 'ConfigMap')).toHaveLength(1);
    const namespaces = new Set(objects.filter((o) => o['kind'] !== 'Namespace').map((o) => (o['metadata'] as Doc)['namespace']));
    expect([...namespaces]).toEqual([`lockfabric-${name}`]);
  });

  it('every object validates', () => {
    expect(objects.flatMap(validateObject)).toEqual([]);
  });

  it('every container has probes, limits, a non-root user, a read-only root fs and no privilege escalation', () => {
    expect(hardeningProblems(objects)).toEqual([]);
  });

  it('every configured value is accepted by the apps own config loader and schema', () => {
    expect(problems).toEqual([]);
    expect(configMapProblems(objects)).toEqual([]);
    expect(instances.length).toBeGreaterThanOrEqual(5);
  });

  it('machine ids are unique and follow the StatefulSet ordinal', () => {
    expect(machineIdProblems(instances)).toEqual([]);
    const ids = instances.map((i) => [i.pod.name, i.config.node.id] as const);
    // Stable: rendering again gives every pod the same id.
    expect(loadAppConfigs(overlay(name), machineId).instances.map((i) => [i.pod.name, i.config.node.id] as const)).toEqual(ids);
    expect(ids.find(([pod]) => pod === 'memory-node-0')?.[1]).toBe(0);
  });

  it('ports, probes and node addresses agree with what the apps listen on', () => {
    expect(portProblems(instances)).toEqual([]);
    expect(addressProblems(objects, instances)).toEqual([]);
  });

  it('NetworkPolicies admit the wire contract and nothing else we know of', () => {
    expect(networkProblems(objects, REQUIRED, FORBIDDEN)).toEqual([]);
  });
});

describe('the dev overlay', () => {
  it('has 1 switch, 1 memory node and 2 compute nodes with ids 0, 1-2, 3 and 4', () => {
    const ids = Object.fromEntries(loadAppConfigs(overlay('dev'), machineId).instances.map((i) => [i.pod.name, i.config.node.id]));
    expect(ids).toEqual({ 'memory-node-0': 0, 'compute-node-0': 1, 'compute-node-1': 2, 'switch-dataplane-0': 3, 'coordinator-pod0': 4 });
  });

  it('reports its total pod resource requests', () => {
    const objects = overlay('dev');
    let cpuMilli = 0;
    let memoryMi = 0;
    for (const o of objects) {
      const spec = (o['spec'] as Doc | undefined)?.['template'] as Doc | undefined;
      if (!spec) continue;
      const replicas = Number((o['spec'] as Doc)['replicas'] ?? 1);
      for (const c of (spec['spec'] as { containers: { resources: { requests: { cpu: string; memory: string } } }[] }).containers) {
        const cpu = c.resources.requests.cpu;
        cpuMilli += replicas * (cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
        const memory = c.resources.requests.memory;
        memoryMi += replicas * (memory.endsWith('Gi') ? Number(memory.slice(0, -2)) * 1024 : Number(memory.slice(0, -2)));
      }
    }
    console.log(`dev overlay pod requests: ${cpuMilli}m CPU, ${memoryMi} Mi memory`);
    expect(cpuMilli).toBeGreaterThan(0);
  });
});

describe('the checks fail on broken manifests', () => {
  const base = overlay('dev');

  it('validation catches a misspelled field, a wrong type and a missing field', () => {
    const broken = clone(base);
    (firstContainer(find(broken, 'StatefulSet', 'compute-node')) as Doc)['readinesProbe'] = {};
    (find(broken, 'Service', 'memory-node')['spec'] as { ports: Doc[] }).ports[0]!['port'] = '50051';
    delete (find(broken, 'Deployment', 'coordinator')['spec'] as Doc)['selector'];
    const problems = broken.flatMap(validateObject);
    expect(problems.some((p) => p.includes('readinesProbe: unknown field'))).toBe(true);
    expect(problems.some((p) => p.includes('port: expected an integer'))).toBe(true);
    expect(problems.some((p) => p.includes('selector: required'))).toBe(true);
  });

  it('hardening catches a missing probe, limit, root user, writable root fs and escalation', () => {
    const broken = clone(base);
    const c = firstContainer(find(broken, 'StatefulSet', 'memory-node')) as Doc & { resources: Doc; securityContext: Doc };
    delete c['livenessProbe'];
    delete c.resources['limits'];
    c.securityContext['readOnlyRootFilesystem'] = false;
    delete c.securityContext['allowPrivilegeEscalation'];
    c.securityContext['runAsUser'] = 0;
    expect(hardeningProblems(broken).join('\n')).toMatch(/no livenessProbe[\s\S]*no cpu limits[\s\S]*uid 0[\s\S]*writable[\s\S]*privilege escalation/);
  });

  it('config checks catch a value the schema rejects and an unknown LOCKFABRIC_ variable', () => {
    const broken = clone(base);
    const configMap = find(broken, 'ConfigMap', 'lockfabric-config') as { data: Record<string, string> };
    configMap.data['config.json'] = configMap.data['config.json']!.replace('"entryBytes": 16', '"entryBytes": 12');
    (firstContainer(find(broken, 'Deployment', 'coordinator')) as { env: Doc[] }).env.push({ name: 'LOCKFABRIC_COORDINATOR_PORT', value: '1' });
    const { problems } = loadAppConfigs(broken, machineId);
    expect(problems.some((p) => p.includes('memory.entryBytes'))).toBe(true);
    expect(problems.some((p) => p.includes('LOCKFABRIC_COORDINATOR_PORT: unknown setting'))).toBe(true);
    expect(configMapProblems(broken)).not.toEqual([]);
  });

  it('machine ids collide when a set starts inside another set range', () => {
    const broken = clone(base);
    const env = (firstContainer(find(broken, 'StatefulSet', 'switch-dataplane')) as { env: { name: string; value?: string }[] }).env;
    env.find((e) => e.name === 'LF_NODE_ID_BASE')!.value = '2';
    expect(machineIdProblems(loadAppConfigs(broken, machineId).instances)).toEqual(['machine id 2 is used by compute-node-1 and switch-dataplane-0']);
  });

  it('address checks catch a workload pointing at a missing pod or a wrong port', () => {
    const broken = clone(base);
    const args = (firstContainer(find(broken, 'Job', 'workload')) as { args: string[] }).args;
    const i = args.findIndex((a) => a.startsWith('--compute-nodes-at='));
    args[i] = '--compute-nodes-at=compute-node-0.compute-node:50055,compute-node-5.compute-node:50052';
    const problems = addressProblems(broken, loadAppConfigs(broken, machineId).instances);
    expect(problems.some((p) => p.includes('uses port 50055'))).toBe(true);
    expect(problems.some((p) => p.includes('compute-node-5.compute-node:50052 names no pod'))).toBe(true);
  });

  it('network checks catch a missing policy and an over-broad one', () => {
    const withoutVerbs = clone(base).filter((o) => !(o['kind'] === 'NetworkPolicy' && (o['metadata'] as Doc)['name'] === 'memory-node-verbs'));
    expect(networkProblems(withoutVerbs, REQUIRED, FORBIDDEN)).toContain('denied: compute-node → memory-node:50051');
    const open = clone(base);
    open.push({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'allow-all' }, spec: { podSelector: {}, ingress: [{}] } });
    expect(networkProblems(open, REQUIRED, FORBIDDEN).filter((p) => p.startsWith('admitted'))).toHaveLength(FORBIDDEN.length);
  });

  it('the renderer refuses features it does not render, and merges named lists by name', () => {
    expect(() => renderKustomization(join(INFRA_DIR, 'k8s'))).toThrow(KustomizeError);
    expect(strategicMerge({ c: [{ name: 'a', x: 1, y: 2 }, { name: 'b' }] }, { c: [{ name: 'a', x: 3 }] })).toEqual({ c: [{ name: 'a', x: 3, y: 2 }, { name: 'b' }] });
  });

  it('machineId derives base + ordinal and rejects a pod name without one', () => {
    expect(machineId({ LF_NODE_ID_BASE: '3', LF_POD_NAME: 'compute-node-2' }, 'x')).toBe(5);
    expect(machineId({ LF_NODE_ID_BASE: '3', LOCKFABRIC_NODE_ID: '9' }, 'compute-node-2')).toBeUndefined();
    expect(() => machineId({ LF_NODE_ID_BASE: '3' }, 'coordinator')).toThrow(/ordinal/);
  });
});
