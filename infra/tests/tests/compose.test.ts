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
}
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
  const ids = [...configs.values()].map((c) => c.config.node.id);
  if (new Set(ids).size !== ids.length) problems.push(`machine ids repeat: ${ids.join(', ')}`);
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
});
