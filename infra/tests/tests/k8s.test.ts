import { readFileSync } from 'node:fs';
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
  parseQuantity,
  renderKustomization,
  requestTotals,
  schemaProblems,
  scrapeProblems,
  strategicMerge,
  natsProblems,
  natsServerTlsProblems,
  tlsProblems,
} from '../src/index.js';
import type { Flow } from '../src/index.js';
import type { Doc } from '../src/yaml-docs.js';

type MachineId = (env: Record<string, string | undefined>, hostname: string) => number | undefined;
const machineIdModule = join(INFRA_DIR, 'docker', 'machine-id.mjs');
const { machineId, machineRack } = (await import(machineIdModule)) as { machineId: MachineId; machineRack: MachineId };

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

describe.each(['dev', 'bench', 'racks'])('overlay %s', (name) => {
  const objects = overlay(name);
  const { instances, problems } = loadAppConfigs(objects, machineId, machineRack);

  it('renders NATS, Jaeger, the services, the workload Job, one ConfigMap and NetworkPolicies in one namespace', () => {
    const kinds = objects.map((o) => `${String(o['kind'])}/${String((o['metadata'] as Doc)['name'])}`);
    for (const expected of ['StatefulSet/nats', 'Deployment/jaeger', 'StatefulSet/memory-node', 'StatefulSet/compute-node', 'StatefulSet/switch-dataplane', 'Deployment/coordinator', 'Job/workload', 'ConfigMap/lockfabric-config', 'NetworkPolicy/default-deny-ingress']) {
      expect(kinds).toContain(expected);
    }
    expect(objects.filter((o) => o['kind'] === 'ConfigMap')).toHaveLength(1);
    const namespaces = new Set(objects.filter((o) => o['kind'] !== 'Namespace').map((o) => (o['metadata'] as Doc)['namespace']));
    expect([...namespaces]).toEqual([`lockfabric-${name}`]);
  });

  it('every object validates strictly against the Kubernetes schema of its kind (kubernetes-models, offline)', () => {
    expect(objects.length).toBeGreaterThan(10);
    expect(objects.flatMap(schemaProblems)).toEqual([]);
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
    expect(loadAppConfigs(overlay(name), machineId, machineRack).instances.map((i) => [i.pod.name, i.config.node.id] as const)).toEqual(ids);
    expect(ids.find(([pod]) => pod === 'memory-node-0')?.[1]).toBe(0);
  });

  it('ports, probes and node addresses agree with what the apps listen on', () => {
    expect(portProblems(instances)).toEqual([]);
    expect(addressProblems(objects, instances)).toEqual([]);
  });

  it('a coordinator expecting other compute nodes than the pods is a problem', () => {
    const wrong = instances.map((i) => (i.app === 'coordinator' ? { ...i, config: { ...i.config, coordinator: { ...i.config.coordinator, computeNodes: ['1', '99'] } } } : i));
    expect(addressProblems(objects, wrong).join('\n')).toMatch(/coordinator\.computeNodes \[1, 99\] is not the compute node pods' ids/);
  });

  it('every LockFabric pod mounts its role certificate Secret read-only and uses it; no ConfigMap holds a key or turns TLS off', () => {
    expect(tlsProblems(objects)).toEqual([]);
  });

  it('every LockFabric service mounts its role NKey Secret read-only and uses it; no NATS secret ships in the manifests', () => {
    expect(natsProblems(objects)).toEqual([]);
  });

  it('nats-server mounts its certificate Secret read-only where its config reads it; every service verifies it with the CA', () => {
    expect(natsServerTlsProblems(objects)).toEqual([]);
  });

  it('every app pod is annotated for a Prometheus scrape of /metrics on its real health port', () => {
    expect(scrapeProblems(instances)).toEqual([]);
  });

  it('NetworkPolicies admit the wire contract and nothing else we know of', () => {
    expect(networkProblems(objects, REQUIRED, FORBIDDEN)).toEqual([]);
  });
});

describe('the racks overlay (multi-rack FissLock, §5.4)', () => {
  const { instances } = loadAppConfigs(overlay('racks'), machineId, machineRack);
  const byPod = Object.fromEntries(instances.map((i) => [i.pod.name, i.config]));

  it('runs a fisslock switch per rack: switch-dataplane-r serves rack r, compute-node-i sits in rack i mod 2', () => {
    expect(Object.fromEntries(instances.map((i) => [i.pod.name, i.config.node.id]))).toEqual({ 'memory-node-0': 0, 'compute-node-0': 1, 'compute-node-1': 2, 'switch-dataplane-0': 3, 'switch-dataplane-1': 4, 'coordinator-pod0': 5 });
    expect([byPod['switch-dataplane-0']?.switch.rack, byPod['switch-dataplane-1']?.switch.rack]).toEqual([0, 1]);
    expect([byPod['compute-node-0']?.node.rack, byPod['compute-node-1']?.node.rack]).toEqual([0, 1]);
    for (const i of instances) expect(i.config.switch.racks, i.pod.name).toBe(2);
    expect(byPod['switch-dataplane-1']?.switch.program).toBe('fisslock');
  });

  it('its workload Job runs fisslock over as many racks as the switches serve', () => {
    const args = (firstContainer(find(overlay('racks'), 'Job', 'workload')) as { args: string[] }).args;
    expect(args.slice(0, 2)).toEqual(['lockfabric', 'bench']);
    expect(args).toContain('--protocol=fisslock');
    const switches = instances.filter((i) => i.app === 'switch-dataplane');
    expect(args).toContain(`--racks=${switches.length}`);
    expect(new Set(switches.map((i) => i.config.switch.racks))).toEqual(new Set([switches.length]));
  });

  it('without the rack rule (no LF_RACKS applied) both switches would serve rack 0: the check sees it', () => {
    const plain = loadAppConfigs(overlay('racks'), machineId).instances;
    expect(plain.filter((i) => i.app === 'switch-dataplane').map((i) => i.config.switch.rack)).toEqual([0, 0]);
  });
});

describe('the dev overlay', () => {
  it('has 1 switch, 1 memory node and 2 compute nodes with ids 0, 1-2, 3 and 4', () => {
    const ids = Object.fromEntries(loadAppConfigs(overlay('dev'), machineId).instances.map((i) => [i.pod.name, i.config.node.id]));
    expect(ids).toEqual({ 'memory-node-0': 0, 'compute-node-0': 1, 'compute-node-1': 2, 'switch-dataplane-0': 3, 'coordinator-pod0': 4 });
  });

  it('its total pod resource requests are the figure the README states', () => {
    const totals = requestTotals(overlay('dev'));
    const readme = readFileSync(join(INFRA_DIR, '..', 'README.md'), 'utf8');
    const stated = /dev overlay requests (\d+) pods?, (\d+)m CPU and (\d+) MiB of memory/.exec(readme);
    expect(stated, 'README states the dev overlay requests').not.toBeNull();
    expect({ pods: totals.pods, cpuMilli: totals.cpuMilli, memoryMi: totals.memoryMi }).toEqual({ pods: Number(stated![1]), cpuMilli: Number(stated![2]), memoryMi: Number(stated![3]) });
  });

  it('request totals parse Kubernetes quantities and count replicas', () => {
    expect(parseQuantity('250m')).toBe(0.25);
    expect(parseQuantity('1.5')).toBe(1.5);
    expect(parseQuantity('64Mi')).toBe(64 * 2 ** 20);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(() => parseQuantity('1 Gi')).toThrow(RangeError);
    const scaled = clone(overlay('dev'));
    (find(scaled, 'StatefulSet', 'compute-node')['spec'] as Doc)['replicas'] = 3;
    const base = requestTotals(overlay('dev'));
    const c = firstContainer(find(scaled, 'StatefulSet', 'compute-node')) as { resources: { requests: { cpu: string; memory: string } } };
    expect(requestTotals(scaled)).toEqual({ pods: base.pods + 1, cpuMilli: base.cpuMilli + parseQuantity(c.resources.requests.cpu) * 1000, memoryMi: base.memoryMi + parseQuantity(c.resources.requests.memory) / 2 ** 20 });
  });
});

describe('the checks fail on broken manifests', () => {
  const base = overlay('dev');

  it('schema validation catches a wrong type, a missing required field, a bad enum and an unknown kind', () => {
    const broken = clone(base);
    (find(broken, 'StatefulSet', 'compute-node')['spec'] as Doc)['replicas'] = 'two';
    delete (firstContainer(find(broken, 'Deployment', 'coordinator')) as Doc)['name'];
    (find(broken, 'Service', 'memory-node')['spec'] as { ports: Doc[] }).ports[0]!['protocol'] = 'QUIC';
    broken.push({ apiVersion: 'apps/v1', kind: 'DeploymentX', metadata: { name: 'x' } });
    const problems = broken.flatMap(schemaProblems);
    expect(problems.some((p) => p.startsWith('apps/v1/StatefulSet compute-node: /spec/replicas must be integer'))).toBe(true);
    expect(problems.some((p) => p.startsWith('apps/v1/Deployment coordinator:') && p.includes('must have required property name'))).toBe(true);
    expect(problems.some((p) => p.startsWith('v1/Service memory-node: /spec/ports/0/protocol'))).toBe(true);
    expect(problems).toContain('apps/v1/DeploymentX x: no Kubernetes schema for this apiVersion/kind');
    // The unbroken objects still validate: only the four mutants are reported.
    expect(new Set(problems.map((p) => p.split(':')[0])).size).toBe(4);
  });

  it('strict validation catches fields the Kubernetes API does not have, at any depth', () => {
    const broken = clone(base);
    const probe = (firstContainer(find(broken, 'StatefulSet', 'compute-node')) as { readinessProbe: Doc }).readinessProbe;
    probe['initialDelaySecond'] = 5;
    (firstContainer(find(broken, 'Deployment', 'coordinator')) as Doc)['readinesProbe'] = {};
    (find(broken, 'Service', 'memory-node')['spec'] as Doc)['selecter'] = {};
    (find(broken, 'ConfigMap', 'lockfabric-config')['metadata'] as Doc)['name'] = 'LockFabric_Config';
    const problems = broken.flatMap(schemaProblems);
    expect([...problems].sort()).toEqual([
      'apps/v1/StatefulSet compute-node: /spec/template/spec/containers/0/readinessProbe/initialDelaySecond is not a field of the Kubernetes API',
      'apps/v1/Deployment coordinator: /spec/template/spec/containers/0/readinesProbe is not a field of the Kubernetes API',
      'v1/Service memory-node: /spec/selecter is not a field of the Kubernetes API',
      'v1/ConfigMap LockFabric_Config: /metadata/name is not a DNS label',
    ].sort());
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

  it('scrape checks catch a wrong port, a missing annotation and a wrong path', () => {
    const broken = clone(base);
    const annotations = (o: Doc) => ((o['spec'] as Doc)['template'] as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
    annotations(find(broken, 'StatefulSet', 'memory-node'))['prometheus.io/port'] = '9090';
    delete annotations(find(broken, 'StatefulSet', 'compute-node'))['prometheus.io/scrape'];
    annotations(find(broken, 'Deployment', 'coordinator'))['prometheus.io/path'] = '/metric';
    const problems = scrapeProblems(loadAppConfigs(broken, machineId).instances);
    expect(problems).toEqual([
      'StatefulSet/memory-node: prometheus.io/port is 9090 but health.port is 8080',
      'StatefulSet/compute-node: not annotated prometheus.io/scrape: "true"',
      'Deployment/coordinator: prometheus.io/path is /metric, not /metrics',
    ]);
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

describe('TLS manifest check', () => {
  it('catches a writable or world-readable certificate mount, an app not pointed at it, a key in a ConfigMap and an insecure pod', () => {
    const broken = clone(overlay('dev'));
    const spec = (o: Doc) => ((o['spec'] as Doc)['template'] as Doc)['spec'] as { containers: Doc[]; volumes: Doc[] };
    const memory = spec(find(broken, 'StatefulSet', 'memory-node'));
    (memory.containers[0]!['volumeMounts'] as Doc[]).find((m) => m['name'] === 'tls')!['readOnly'] = false;
    (memory.volumes.find((v) => v['name'] === 'tls')!['secret'] as Doc)['defaultMode'] = 0o444;
    const coordinator = spec(find(broken, 'Deployment', 'coordinator'));
    coordinator.containers[0]!['env'] = (coordinator.containers[0]!['env'] as Doc[]).filter((e) => e['name'] !== 'LOCKFABRIC_TLS_DIR');
    (spec(find(broken, 'StatefulSet', 'compute-node')).containers[0]!['env'] as Doc[]).push({ name: 'LOCKFABRIC_TLS_MODE', value: 'insecure' });
    const configMap = find(broken, 'ConfigMap', 'lockfabric-config') as { data: Record<string, string> };
    configMap.data['key.pem'] = '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n';
    const problems = tlsProblems(broken);
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/mounted writable[\s\S]*world-readable|world-readable[\s\S]*mounted writable/);
  });
});

describe('NATS TLS manifest check', () => {
  it('catches a writable or world-readable or misplaced server certificate, a missing fsGroup, a shipped nats-tls Secret and a service without the CA', () => {
    const broken = clone(overlay('dev'));
    const spec = (o: Doc) => ((o['spec'] as Doc)['template'] as Doc)['spec'] as { containers: Doc[]; volumes: Doc[]; securityContext: Doc };
    const nats = spec(find(broken, 'StatefulSet', 'nats'));
    const mount = (nats.containers[0]!['volumeMounts'] as Doc[]).find((m) => m['name'] === 'tls')!;
    mount['readOnly'] = false;
    mount['mountPath'] = '/etc/nats/tls';
    (nats.volumes.find((v) => v['name'] === 'tls')!['secret'] as Doc)['defaultMode'] = 0o444;
    delete nats.securityContext['fsGroup'];
    const switchDp = spec(find(broken, 'StatefulSet', 'switch-dataplane'));
    switchDp.containers[0]!['env'] = (switchDp.containers[0]!['env'] as Doc[]).filter((e) => e['name'] !== 'LOCKFABRIC_NATS_CA_FILE');
    broken.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nats-tls' }, stringData: { 'tls.key': 'x' } });
    const server = natsServerTlsProblems(broken).join('\n');
    expect(server).toMatch(/world-readable/);
    expect(server).toMatch(/no fsGroup/);
    expect(server).toMatch(/mounted at \/etc\/nats\/tls, but nats.conf reads \/etc\/nats-tls/);
    expect(server).toMatch(/mounted writable/);
    expect(natsServerTlsProblems(broken)).toHaveLength(4);
    const services = natsProblems(broken).join('\n');
    expect(services).toMatch(/switch-dataplane: LOCKFABRIC_NATS_CA_FILE/);
    expect(services).toMatch(/Secret\/nats-tls/);
    const gone = clone(overlay('dev'));
    spec(find(gone, 'StatefulSet', 'nats')).volumes = spec(find(gone, 'StatefulSet', 'nats')).volumes.filter((v) => v['name'] !== 'tls');
    expect(natsServerTlsProblems(gone)).toEqual(['StatefulSet/nats: no volume from Secret nats-tls (the server certificate)']);
  });
});

describe('per-pod NKeys manifest check', () => {
  it.each(['compute-node', 'memory-node', 'switch-dataplane'])('each %s pod reads the seed named after it; the check catches the shared role seed and a pod name defined too late', (set) => {
    const spec = (o: Doc) => ((o['spec'] as Doc)['template'] as Doc)['spec'] as { containers: Doc[] };
    const shared = clone(overlay('dev'));
    const sharedEnv = spec(find(shared, 'StatefulSet', set)).containers[0]!['env'] as Doc[];
    sharedEnv.find((e) => e['name'] === 'LOCKFABRIC_NATS_SEED_FILE')!['value'] = '/var/run/secrets/lockfabric/nats/nkey.seed';
    expect(natsProblems(shared)).toEqual([`StatefulSet/${set}: LOCKFABRIC_NATS_SEED_FILE does not point at the seed mounted at /var/run/secrets/lockfabric/nats/$(LF_POD_NAME).seed`]);
    const late = clone(overlay('dev'));
    const c = spec(find(late, 'StatefulSet', set)).containers[0]!;
    const env = c['env'] as Doc[];
    const pod = env.find((e) => e['name'] === 'LF_POD_NAME')!;
    c['env'] = [...env.filter((e) => e !== pod), pod];
    expect(natsProblems(late)).toEqual([`StatefulSet/${set}: LF_POD_NAME (metadata.name) is not defined before LOCKFABRIC_NATS_SEED_FILE, so $(LF_POD_NAME) does not expand`]);
  });
});

describe('NATS credentials manifest check', () => {
  it('catches a writable or world-readable seed mount, an app not pointed at it, a password URL, a shipped Secret and a seed in a ConfigMap', () => {
    const broken = clone(overlay('dev'));
    const spec = (o: Doc) => ((o['spec'] as Doc)['template'] as Doc)['spec'] as { containers: Doc[]; volumes: Doc[] };
    const memory = spec(find(broken, 'StatefulSet', 'memory-node'));
    (memory.containers[0]!['volumeMounts'] as Doc[]).find((m) => m['name'] === 'nats-credentials')!['readOnly'] = false;
    (memory.volumes.find((v) => v['name'] === 'nats-credentials')!['secret'] as Doc)['defaultMode'] = 0o444;
    const coordinator = spec(find(broken, 'Deployment', 'coordinator'));
    coordinator.containers[0]!['env'] = (coordinator.containers[0]!['env'] as Doc[]).filter((e) => e['name'] !== 'LOCKFABRIC_NATS_SEED_FILE');
    const compute = spec(find(broken, 'StatefulSet', 'compute-node'));
    (compute.containers[0]!['env'] as Doc[]).find((e) => e['name'] === 'LOCKFABRIC_NATS_URL')!['value'] = 'nats://lf:secret@nats-0.nats:4222';
    broken.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nats-config' }, stringData: { 'nats.conf': 'port: 4222' } });
    const configMap = find(broken, 'ConfigMap', 'lockfabric-config') as { data: Record<string, string> };
    configMap.data['seed'] = 'SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU';
    const problems = natsProblems(broken);
    expect(problems).toHaveLength(6);
    expect(problems.join('\n')).toMatch(/mounted writable/);
    expect(problems.join('\n')).toMatch(/world-readable/);
    expect(problems.join('\n')).toMatch(/coordinator: LOCKFABRIC_NATS_SEED_FILE/);
    expect(problems.join('\n')).toMatch(/compute-node: LOCKFABRIC_NATS_URL carries credentials/);
    expect(problems.join('\n')).toMatch(/Secret\/nats-config/);
    expect(problems.join('\n')).toMatch(/holds an NKey seed/);
  });
});
