import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSubjects } from '@lockfabric/live';
import { startNatsServer, type NatsServerHandle } from '@lockfabric/testkit';
import { connect, nkeyAuthenticator, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { computePodSeedName, podSeedName, roleNatsCredentials, rolePermissions, type NatsRoleName } from './nats-role-auth.js';

// The per-role server config `certs create` writes for Kubernetes, on a real nats-server: a compute
// pod's key cannot publish membership, recovery orders or switch egress; the coordinator's can.

const subjects = createSubjects('k8s');
const FORGED = [subjects.membership(), subjects.recovery('order'), subjects.nodePackets(2), subjects.heartbeat('switch', '3')];
const servers: NatsServerHandle[] = [];
const open: NatsConnection[] = [];

async function serverWith(config: string): Promise<NatsServerHandle> {
  const file = join(mkdtempSync(join(tmpdir(), 'lf-nats-role-')), 'nats.conf');
  // The test server picks its own ports: drop the fixed ones meant for the pod.
  writeFileSync(file, config.replace(/^port: \d+\n/m, '').replace(/^http_port: \d+\n/m, ''));
  const server = await startNatsServer({ args: ['-c', file] });
  servers.push(server);
  return server;
}

async function as(server: NatsServerHandle, seed: string): Promise<{ nc: NatsConnection; refused: string[] }> {
  const nc = await connect({ servers: server.url, maxReconnectAttempts: 0, authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)) });
  open.push(nc);
  const refused: string[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error' && s.error instanceof PermissionViolationError) refused.push(s.error.subject);
  })();
  return { nc, refused };
}

/** What an operator hears when `role` publishes every forged subject and then its own heartbeat. */
async function forgeAs(config: { seeds: Partial<Record<NatsRoleName, string>>; serverConfig: string }, role: NatsRoleName): Promise<{ heard: string[]; refused: string[] }> {
  const server = await serverWith(config.serverConfig);
  const observer = await as(server, config.seeds.driver!);
  const heard: string[] = [];
  observer.nc.subscribe('lf.>', { callback: (_e, m) => void heard.push(m.subject) });
  await observer.nc.flush();
  const who = await as(server, config.seeds[role]!);
  for (const s of FORGED) who.nc.publish(s, new Uint8Array([1]));
  const own = subjects.heartbeat('compute', '1');
  who.nc.publish(own, new Uint8Array([1]));
  await who.nc.flush();
  for (let i = 0; i < 400 && !heard.includes(own); i++) await new Promise((r) => setTimeout(r, 25));
  await observer.nc.flush();
  return { heard: heard.filter((s) => s !== own), refused: who.refused };
}

afterAll(async () => {
  for (const nc of open) await nc.close().catch(() => undefined);
  for (const s of servers) await s.stop();
});

describe('per-role NATS permissions (real nats-server)', () => {
  it("refuses a compute pod's membership, recovery order, switch egress and switch heartbeat", async () => {
    const r = await forgeAs(roleNatsCredentials(), 'compute-node');
    expect(r.heard).toEqual([]);
    for (let i = 0; i < 400 && r.refused.length < FORGED.length; i++) await new Promise((res) => setTimeout(res, 25));
    expect(r.refused.sort()).toEqual([...FORGED].sort());
  });

  it('lets the coordinator publish them', async () => {
    const r = await forgeAs(roleNatsCredentials(), 'coordinator');
    // the coordinator may publish a compute heartbeat too, so the sentinel arrives
    expect(r.heard.sort()).toEqual([...FORGED].sort());
    expect(r.refused).toEqual([]);
  });

  it('catches a config that gives compute pods the coordinator grants (mutant)', async () => {
    const real = roleNatsCredentials();
    const compute = rolePermissions('compute-node');
    const mutant = real.serverConfig.replace(JSON.stringify(compute.publish[0]), '"lf.>"');
    expect(mutant).not.toBe(real.serverConfig);
    const r = await forgeAs({ ...real, serverConfig: mutant }, 'compute-node');
    expect(r.heard.sort()).toEqual([...FORGED].sort());
  });
});

/** The subjects `seed` publishes (then `own`, published last) and subscribes; what the driver heard and what the server refused. */
async function attempt(config: ReturnType<typeof roleNatsCredentials>, seed: string, publish: readonly string[], subscribe: readonly string[], own: string): Promise<{ heard: string[]; refused: string[] }> {
  const server = await serverWith(config.serverConfig);
  const observer = await as(server, config.seeds['driver']!);
  const heard: string[] = [];
  observer.nc.subscribe('lf.>', { callback: (_e, m) => void heard.push(m.subject) });
  await observer.nc.flush();
  const pod = await as(server, seed);
  for (const s of subscribe) pod.nc.subscribe(s);
  for (const s of publish) pod.nc.publish(s, new Uint8Array([1]));
  pod.nc.publish(own, new Uint8Array([1]));
  await pod.nc.flush();
  for (let i = 0; i < 400 && !heard.includes(own); i++) await new Promise((r) => setTimeout(r, 25));
  return { heard, refused: pod.refused };
}
const waitRefused = async (r: { refused: string[] }, n: number) => {
  for (let i = 0; i < 400 && r.refused.length < n; i++) await new Promise((res) => setTimeout(res, 25));
};

describe('per-pod compute NKeys (certs create --compute-nodes; real nats-server)', () => {
  /** What the driver hears when compute pod `pod` (node 1) publishes node 2's heartbeat and then its own. */
  const podForges = (config: ReturnType<typeof roleNatsCredentials>, seed: string) =>
    attempt(config, seed, [subjects.heartbeat('compute', '2')], [subjects.nodePackets(2)], subjects.heartbeat('compute', '1'));

  it("refuses compute-node-0 (node 1) node 2's heartbeat and packets, and allows its own heartbeat", async () => {
    const config = roleNatsCredentials(undefined, { compute: { count: 2, idBase: 1 } });
    expect(Object.keys(config.podSeeds['compute-node']!)).toEqual([computePodSeedName(0), computePodSeedName(1)]);
    expect(config.seeds['compute-node']).toBeUndefined();
    const r = await podForges(config, config.podSeeds['compute-node']![computePodSeedName(0)]!);
    expect(r.heard).toContain(subjects.heartbeat('compute', '1'));
    expect(r.heard).not.toContain(subjects.heartbeat('compute', '2'));
    await waitRefused(r, 2);
    expect(r.refused.sort()).toEqual([subjects.heartbeat('compute', '2'), subjects.nodePackets(2)].sort());
  });

  it('catches the shared role key (mutant): with it, a compute pod publishes another node\'s heartbeat', async () => {
    const role = roleNatsCredentials();
    const r = await podForges(role, role.seeds['compute-node']!);
    expect(r.heard).toContain(subjects.heartbeat('compute', '2'));
  });
});

describe('per-pod memory, switch and rack-bound compute NKeys (certs create --memory-nodes/--switches/--compute-racks; real nats-server)', () => {
  const pods = { compute: { count: 2, idBase: 3, racks: [0, 1] }, memory: { count: 2, idBase: 0 }, switches: { count: 2, idBase: 5 } };

  it("refuses memory-node-0 (node 0) node 1's heartbeat and mailbox, and allows its own heartbeat", async () => {
    const config = roleNatsCredentials(undefined, pods);
    expect(config.seeds['memory-node']).toBeUndefined();
    const forged = [subjects.heartbeat('memory', '1'), subjects.nodeMessages(3, 1)];
    const r = await attempt(config, config.podSeeds['memory-node']![podSeedName('memory-node', 0)]!, forged, [subjects.nodeInbox(1)], subjects.heartbeat('memory', '0'));
    expect(r.heard).toContain(subjects.heartbeat('memory', '0'));
    await waitRefused(r, 3);
    expect(r.refused.sort()).toEqual([...forged, subjects.nodeInbox(1)].sort());
    expect(r.heard.filter((s) => forged.includes(s))).toEqual([]);
  });

  it("refuses switch-dataplane-0 (rack 0, node 5) rack 1's input and echo and node 6's heartbeat; allows its own", async () => {
    const config = roleNatsCredentials(undefined, pods);
    const subscribe = [subjects.switchIn(1), subjects.switchEcho(1), subjects.switchEcho(0)];
    const r = await attempt(config, config.podSeeds.switch![podSeedName('switch', 0)]!, [subjects.heartbeat('switch', '6')], subscribe, subjects.heartbeat('switch', '5'));
    expect(r.heard).toContain(subjects.heartbeat('switch', '5'));
    await waitRefused(r, 3);
    // its own rack's echo subject (bench's NATS floor) is not refused
    expect(r.refused.sort()).toEqual([subjects.heartbeat('switch', '6'), subjects.switchIn(1), subjects.switchEcho(1)].sort());
  });

  it("refuses compute-node-1 (rack 1) rack 0's switch input and takes its own rack's; --compute-switch-racks adds rack 0", async () => {
    const config = roleNatsCredentials(undefined, pods);
    const seed = config.podSeeds['compute-node']![computePodSeedName(1)]!;
    const r = await attempt(config, seed, [subjects.switchIn(0)], [], subjects.switchIn(1));
    expect(r.heard).toEqual([subjects.switchIn(1)]);
    await waitRefused(r, 1);
    expect(r.refused).toEqual([subjects.switchIn(0)]);
    const both = roleNatsCredentials(undefined, { compute: { ...pods.compute, extraSwitchRacks: [0, 1] } });
    const r2 = await attempt(both, both.podSeeds['compute-node']![computePodSeedName(1)]!, [subjects.switchIn(0)], [], subjects.switchIn(1));
    expect(r2.heard.sort()).toEqual([subjects.switchIn(0), subjects.switchIn(1)]);
    expect(r2.refused).toEqual([]);
  });

  it("catches the shared memory and switch role keys (mutant): with them a pod speaks as another node and reads another rack", async () => {
    const role = roleNatsCredentials();
    const memory = await attempt(role, role.seeds['memory-node']!, [subjects.heartbeat('memory', '1')], [], subjects.heartbeat('memory', '0'));
    expect(memory.heard).toContain(subjects.heartbeat('memory', '1'));
    const sw = await attempt(role, role.seeds.switch!, [subjects.heartbeat('switch', '6')], [subjects.switchIn(1)], subjects.heartbeat('switch', '5'));
    expect(sw.heard).toContain(subjects.heartbeat('switch', '6'));
    expect(sw.refused).toEqual([]);
  });
});
