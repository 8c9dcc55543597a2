import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@lockfabric/config';
import type { Config } from '@lockfabric/config';
import { INFRA_DIR, readYamlDocs } from '../src/index.js';

interface Service {
  image?: string;
  build?: { dockerfile?: string };
  command?: string[];
  environment?: Record<string, string>;
  read_only?: boolean;
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition?: string }> | string[];
  volumes?: string[];
}
/** Jaeger all-in-one's admin port, whose `/` answers 200 when it is up (not configurable here). */
const JAEGER_ADMIN_PORT = 14269;
const HEALTH_PATHS = ['/readyz', '/healthz'];
const ROLES = { 'memory-node': 'memory', 'compute-node': 'compute', 'switch-dataplane': 'switch', coordinator: 'coordinator' } as const;

/** Problems of a compose file: apps and env the image accepts, addresses that name a service and its port. */
function composeProblems(services: Record<string, Service>): string[] {
  const problems: string[] = [];
  const configs = new Map<string, { app: string; config: Config }>();
  for (const [name, s] of Object.entries(services)) {
    const app = s.command?.[0];
    if (s.build === undefined) continue;
    if (s.build.dockerfile !== 'infra/docker/Dockerfile') problems.push(`${name}: builds from ${String(s.build.dockerfile)}`);
    if (s.read_only !== true) problems.push(`${name}: root filesystem is writable`);
    if (app === 'lockfabric') continue;
    if (app === undefined || !(app in ROLES)) {
      problems.push(`${name}: command ${JSON.stringify(s.command)} names no app of the image`);
      continue;
    }
    try {
      configs.set(name, { app, config: loadConfig({ role: ROLES[app as keyof typeof ROLES], argv: s.command!.slice(1), env: s.environment ?? {} }) });
    } catch (error) {
      problems.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const expect = (where: string, address: string, app: string, port: (c: Config) => number) => {
    const [host, portText] = address.split(':');
    const target = configs.get(host ?? '');
    if (!target || target.app !== app) problems.push(`${where}: ${address} is not a ${app} service`);
    else if (port(target.config) !== Number(portText)) problems.push(`${where}: ${address} but ${host} listens on ${port(target.config)}`);
  };
  for (const [name, { config }] of configs) {
    for (const a of config.compute.memoryNodes) expect(name, a, 'memory-node', (c) => c.memory.grpcPort);
    const nats = new URL(config.nats.url);
    if (!(nats.hostname in services)) problems.push(`${name}: NATS host ${nats.hostname} is not a service`);
  }
  for (const [name, s] of Object.entries(services)) {
    if (s.command?.[0] !== 'lockfabric') continue;
    const flag = (f: string) => s.command?.find((a) => a.startsWith(`--${f}=`))?.slice(f.length + 3) ?? '';
    for (const a of flag('compute-nodes-at').split(',').filter(Boolean)) expect(name, a, 'compute-node', (c) => c.compute.grpcPort);
    for (const a of flag('memory-nodes-at').split(',').filter(Boolean)) expect(name, a, 'memory-node', (c) => c.memory.grpcPort);
  }
  const computeIds = [...configs.values()].filter((c) => c.app === 'compute-node').map((c) => String(c.config.node.id)).sort();
  for (const [name, { app, config }] of configs) {
    const expected = [...(config.coordinator.computeNodes ?? [])].sort();
    if (app === 'coordinator' && expected.join(',') !== computeIds.join(',')) problems.push(`${name}: coordinator.computeNodes [${expected.join(', ')}] is not the compute nodes' ids [${computeIds.join(', ')}]`);
  }
  problems.push(...healthProblems(services, configs));
  const ids = [...configs.values()].map((c) => c.config.node.id);
  if (new Set(ids).size !== ids.length) problems.push(`machine ids repeat: ${ids.join(', ')}`);
  return problems;
}

/**
 * Healthchecks and start order: every long-running service probes a port and path it really
 * serves (an app's health.port and /readyz or /healthz; NATS's monitoring port; Jaeger's admin
 * port), and every depends_on waits for service_healthy of a service that has a healthcheck.
 */
function healthProblems(services: Record<string, Service>, configs: ReadonlyMap<string, { config: Config }>): string[] {
  const problems: string[] = [];
  const probed = new Set<string>();
  for (const [name, s] of Object.entries(services)) {
    if (s.healthcheck?.disable === true) {
      if (s.command?.[0] !== 'lockfabric') problems.push(`${name}: only one-shot lockfabric runs may disable the healthcheck`);
      continue;
    }
    const url = (s.healthcheck?.test ?? []).join(' ').match(/http:\/\/(127\.0\.0\.1|localhost):(\d+)(\/[^'" ]*)/);
    if (!url) {
      problems.push(`${name}: no healthcheck probing a local http URL`);
      continue;
    }
    const [, , portText, path] = url;
    const port = Number(portText);
    const config = configs.get(name)?.config;
    if (config) {
      if (port !== config.health.port) problems.push(`${name}: healthcheck probes port ${port} but health.port is ${config.health.port}`);
      if (!HEALTH_PATHS.includes(path ?? '')) problems.push(`${name}: healthcheck probes ${path}, not one of ${HEALTH_PATHS.join(', ')}`);
      if (s.healthcheck?.test?.[0] !== 'CMD' || s.healthcheck.test[1] !== 'node') problems.push(`${name}: the image has node but no curl or wget; probe with node`);
    } else if (name === 'nats') {
      const monitor = s.command?.[s.command.indexOf('-m') + 1];
      if (!s.command?.includes('-m') || Number(monitor) !== port) problems.push(`${name}: healthcheck probes port ${port} but monitoring listens on ${String(monitor)}`);
    } else if (name === 'jaeger') {
      if (port !== JAEGER_ADMIN_PORT) problems.push(`${name}: healthcheck probes port ${port}, not the admin port ${JAEGER_ADMIN_PORT}`);
    } else problems.push(`${name}: healthcheck of an unknown kind of service`);
    probed.add(name);
  }
  for (const [name, s] of Object.entries(services)) {
    const deps = s.depends_on ?? {};
    if (Array.isArray(deps)) {
      if (deps.length > 0) problems.push(`${name}: depends_on is a list (starts before its dependencies are healthy)`);
      continue;
    }
    for (const [dep, { condition }] of Object.entries(deps)) {
      if (!(dep in services)) problems.push(`${name}: depends on ${dep}, which is not a service`);
      else if (condition !== 'service_healthy') problems.push(`${name}: depends on ${dep} with condition ${String(condition)}, not service_healthy`);
      else if (!probed.has(dep)) problems.push(`${name}: waits for ${dep} to be healthy but ${dep} has no healthcheck`);
    }
  }
  return problems;
}

/** Identity role of each app's certificate folder (decision record 0007); the CLI acts as the driver. */
const TLS_ROLES: Record<string, string> = { 'memory-node': 'memory-node', 'compute-node': 'compute-node', 'switch-dataplane': 'switch', coordinator: 'coordinator', lockfabric: 'driver' };

/** Every app mounts its role's certificate folder read-only where it reads it, and nothing turns TLS off. */
/** NATS auth in compose: nats-server runs the generated config; each app mounts its role's NKey read-only at the standard location. */
function composeNatsProblems(services: Record<string, Service>): string[] {
  const problems: string[] = [];
  const nats = services['nats'];
  const conf = './tls/nats/nats.conf:/etc/nats/nats.conf:ro';
  // The server certificate where nats.conf (from certs create) reads it: NATS is TLS only.
  const serverTls = './tls/nats/server:/etc/nats-tls:ro';
  if (!nats?.command?.join(' ').includes('-c /etc/nats/nats.conf')) problems.push('nats: does not run with /etc/nats/nats.conf');
  if (!(nats?.volumes ?? []).includes(conf)) problems.push(`nats: does not mount ${conf}`);
  if (!(nats?.volumes ?? []).includes(serverTls)) problems.push(`nats: does not mount ${serverTls}`);
  for (const [name, s] of Object.entries(services)) {
    if (s.build === undefined) continue;
    const role = TLS_ROLES[s.command?.[0] ?? ''];
    const mount = `./tls/nats/${String(role)}:/etc/lockfabric/nats:ro`;
    if (!(s.volumes ?? []).includes(mount)) problems.push(`${name}: does not mount ${mount}`);
    if (/\/\/[^/@]*@/.test(s.environment?.['LOCKFABRIC_NATS_URL'] ?? '')) problems.push(`${name}: LOCKFABRIC_NATS_URL carries credentials`);
  }
  return problems;
}

function composeTlsProblems(services: Record<string, Service>): string[] {
  const problems: string[] = [];
  for (const [name, s] of Object.entries(services)) {
    if (s.build === undefined) continue;
    const role = TLS_ROLES[s.command?.[0] ?? ''];
    const mount = `./tls/${String(role)}:/etc/lockfabric/tls:ro`;
    if (!(s.volumes ?? []).includes(mount)) problems.push(`${name}: does not mount ${mount}`);
    const env = s.environment ?? {};
    if (env['LOCKFABRIC_TLS_MODE'] === 'insecure') problems.push(`${name}: LOCKFABRIC_TLS_MODE=insecure`);
    if (role === 'driver' && env['LOCKFABRIC_TLS_CERT'] !== '/etc/lockfabric/tls/tls.crt') problems.push(`${name}: the CLI is not pointed at its certificate`);
  }
  return problems;
}

const compose = () => readYamlDocs(join(INFRA_DIR, 'compose', 'compose.yaml'))[0] as { services: Record<string, Service> };

describe('infra/compose/compose.yaml', () => {
  it('parses and references only apps, env, services and ports the apps accept', () => {
    const { services } = compose();
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['nats', 'jaeger', 'memory-node', 'compute-node-1', 'compute-node-2', 'workload']));
    expect(composeProblems(services)).toEqual([]);
  });

  it('the check fails on a bad env value, an unknown variable, a wrong port and a duplicate id', () => {
    const { services } = compose();
    services['memory-node']!.environment!['LOCKFABRIC_MEMORY_ENTRY_BYTES'] = '12';
    services['compute-node-2']!.environment!['LOCKFABRIC_NODE_ID'] = '1';
    services['switch-dataplane']!.environment!['LOCKFABRIC_SWITCH_PORT'] = '1';
    services['workload']!.command = ['lockfabric', 'bench', '--compute-nodes-at=compute-node-1:50055', '--memory-nodes-at=nats:4222'];
    const problems = composeProblems(services).join('\n');
    expect(problems).toMatch(/memory\.entryBytes/);
    expect(problems).toMatch(/LOCKFABRIC_SWITCH_PORT: unknown setting/);
    expect(problems).toMatch(/compute-node-1:50055 but compute-node-1 listens on 50052/);
    expect(problems).toMatch(/nats:4222 is not a memory-node service/);
  });

  it('every app waits for healthy dependencies and probes its own health port', () => {
    const { services } = compose();
    for (const name of ['memory-node', 'compute-node-1', 'compute-node-2', 'switch-dataplane', 'coordinator']) {
      expect(services[name]!.depends_on, name).toMatchObject({ nats: { condition: 'service_healthy' }, jaeger: { condition: 'service_healthy' } });
      expect(services[name]!.healthcheck?.test?.join(' '), name).toMatch(/127\.0\.0\.1:8080\/readyz/);
    }
    expect(services['compute-node-1']!.depends_on).toMatchObject({ 'memory-node': { condition: 'service_healthy' } });
  });

  it('the health check fails on a moved health port, a wrong path, a plain depends_on and a dependency without a probe', () => {
    const { services } = compose();
    services['memory-node']!.environment!['LOCKFABRIC_HEALTH_PORT'] = '9090';
    services['coordinator']!.healthcheck = { test: ['CMD', 'node', '-e', "fetch('http://127.0.0.1:8080/ready')"] };
    services['compute-node-2']!.depends_on = { 'memory-node': { condition: 'service_started' } };
    delete services['switch-dataplane']!.healthcheck;
    services['compute-node-1']!.depends_on = { 'switch-dataplane': { condition: 'service_healthy' } };
    services['nats']!.command = ['-p', '4222', '-m', '8223'];
    const problems = composeProblems(services).join('\n');
    expect(problems).toMatch(/memory-node: healthcheck probes port 8080 but health.port is 9090/);
    expect(problems).toMatch(/coordinator: healthcheck probes \/ready, not one of/);
    expect(problems).toMatch(/compute-node-2: depends on memory-node with condition service_started/);
    expect(problems).toMatch(/switch-dataplane: no healthcheck/);
    expect(problems).toMatch(/compute-node-1: waits for switch-dataplane to be healthy but switch-dataplane has no healthcheck/);
    expect(problems).toMatch(/nats: healthcheck probes port 8222 but monitoring listens on 8223/);
  });

  it('every app and the CLI mount their role certificates read-only; the check catches a writable, wrong-role or missing mount and TLS off', () => {
    expect(composeTlsProblems(compose().services)).toEqual([]);
    const { services } = compose();
    services['memory-node']!.volumes = ['./tls/memory-node:/etc/lockfabric/tls'];
    services['coordinator']!.volumes = ['./tls/operator:/etc/lockfabric/tls:ro'];
    delete services['switch-dataplane']!.volumes;
    services['compute-node-1']!.environment!['LOCKFABRIC_TLS_MODE'] = 'insecure';
    expect(composeTlsProblems(services)).toHaveLength(4);
  });

  it('NATS runs the generated NKey config and every app mounts its role seed read-only; the check catches a plain server, one without its certificate, a writable or wrong-role mount and a password URL', () => {
    expect(composeNatsProblems(compose().services)).toEqual([]);
    const { services } = compose();
    services['nats']!.command = ['-p', '4222', '-m', '8222'];
    services['nats']!.volumes = ['./tls/nats/nats.conf:/etc/nats/nats.conf:ro'];
    services['memory-node']!.volumes = ['./tls/memory-node:/etc/lockfabric/tls:ro', './tls/nats/memory-node:/etc/lockfabric/nats'];
    services['coordinator']!.volumes = ['./tls/coordinator:/etc/lockfabric/tls:ro', './tls/nats/driver:/etc/lockfabric/nats:ro'];
    services['compute-node-1']!.environment!['LOCKFABRIC_NATS_URL'] = 'nats://lf:pw@nats:4222';
    expect(composeNatsProblems(services)).toHaveLength(5);
    expect(composeNatsProblems(services)).toContain('nats: does not mount ./tls/nats/server:/etc/nats-tls:ro');
  });
});
