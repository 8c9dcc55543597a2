import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { startNatsServer, type NatsServerHandle } from '@lockfabric/testkit';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentities, natsAuthorizationConfig, permissionsFor, type NatsIdentity, type ServiceSpec } from './nats-auth.js';

/** Real nats-server with the generated authorization; each service connects with its own NKey. */
const subjects = createSubjects('auth');
const services: ServiceSpec[] = [
  { role: 'coordinator', id: 'c0' },
  { role: 'compute', id: '1', rack: 0 },
  { role: 'compute', id: '2', rack: 0 },
  // talks to the switches of racks 0 and 1 (locks partitioned over racks)
  { role: 'compute', id: '3', rack: 0, switchRacks: [0, 1] },
  { role: 'switch', id: '0', rack: 0 },
];
const identities = createIdentities(services);
let nats: NatsServerHandle;
const open: NatsConnection[] = [];

function identity(role: string, id: string): NatsIdentity {
  const found = identities.find((i) => i.role === role && i.id === id);
  if (!found) throw new Error(`no identity ${role} ${id}`);
  return found;
}

async function as(who: NatsIdentity, server: NatsServerHandle = nats): Promise<{ nc: NatsConnection; violations: string[] }> {
  const nc = await connectNats({ servers: server.url, name: `${who.role}-${who.id}`, nkeySeed: who.seed, waitOnFirstConnect: false, logger: silentLogger });
  open.push(nc);
  const violations: string[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') violations.push(String((s as { error?: unknown }).error ?? ''));
  })();
  return { nc, violations };
}

async function serverWith(permissions?: Parameters<typeof natsAuthorizationConfig>[3]): Promise<NatsServerHandle> {
  const config = join(mkdtempSync(join(tmpdir(), 'lf-nats-auth-')), 'nats.conf');
  writeFileSync(config, natsAuthorizationConfig(subjects, services, identities, permissions));
  return startNatsServer({ args: ['-c', config] });
}

beforeAll(async () => {
  nats = await serverWith();
});

const FORGED = [subjects.heartbeat('compute', '2'), subjects.nodePackets(2), subjects.membership(), subjects.recovery('order'), subjects.fault('compute-2')];

/** Compute node 1 publishes as node 2, as the switch and as the coordinator; the coordinator listens. */
async function forge(server: NatsServerHandle): Promise<{ heardForged: string[]; violations: string[] }> {
  const observer = await as(identity('coordinator', 'c0'), server);
  const heard: string[] = [];
  observer.nc.subscribe(`${subjects.prefix}.>`, { callback: (_e, m) => void heard.push(m.subject) });
  await observer.nc.flush();
  const node1 = await as(identity('compute', '1'), server);
  for (const subject of FORGED) node1.nc.publish(subject, new Uint8Array([1]));
  // Its own heartbeat is allowed; once it arrives, every earlier publish has been judged.
  node1.nc.publish(subjects.heartbeat('compute', '1'), new Uint8Array([1]));
  await node1.nc.flush();
  await waitUntil(() => heard.includes(subjects.heartbeat('compute', '1')));
  await observer.nc.flush();
  return { heardForged: heard.filter((s) => FORGED.includes(s)), violations: node1.violations };
}

afterAll(async () => {
  for (const nc of open) await nc.close();
  await nats?.stop();
});

describe('NATS authentication with least-privilege permissions (real nats-server)', () => {
  it('refuses a connection without credentials', async () => {
    await expect(connect({ servers: nats.url, timeout: 2_000 })).rejects.toThrow(/Authorization/i);
  });

  it("refuses a compute node's attempts to speak as another node or as the coordinator", async () => {
    const r = await forge(nats);
    await waitUntil(() => r.violations.length >= FORGED.length);
    expect(r.heardForged).toEqual([]);
    for (const subject of FORGED) expect(r.violations.some((v) => v.includes(subject))).toBe(true);
  });

  it('catches a configuration that grants compute nodes the whole prefix (mutant)', async () => {
    const mutant = await serverWith((subs, service) => (service.role === 'compute' ? permissionsFor(subs, { role: 'coordinator', id: service.id }) : permissionsFor(subs, service)));
    try {
      const r = await forge(mutant);
      expect(r.heardForged.sort()).toEqual([...FORGED].sort());
    } finally {
      await mutant.stop();
    }
  });

  it("refuses a compute node's subscription to another node's packets", async () => {
    const node2 = await as(identity('compute', '2'));
    node2.nc.subscribe(subjects.nodePackets(1));
    await node2.nc.flush();
    await waitUntil(() => node2.violations.length > 0);
    expect(node2.violations.some((v) => v.includes(subjects.nodePackets(1)))).toBe(true);
  });

  it("lets the coordinator publish membership and failure notices, and the switch publish egress", async () => {
    const node1 = await as(identity('compute', '1'));
    const received: string[] = [];
    node1.nc.subscribe(subjects.membership(), { callback: (_e, m) => void received.push(m.subject) });
    node1.nc.subscribe(subjects.nodePackets(1), { callback: (_e, m) => void received.push(m.subject) });
    await node1.nc.flush();
    const coordinator = await as(identity('coordinator', 'c0'));
    const sw = await as(identity('switch', '0'));
    coordinator.nc.publish(subjects.membership(), new Uint8Array([1]));
    sw.nc.publish(subjects.nodePackets(1), new Uint8Array([1]));
    await Promise.all([coordinator.nc.flush(), sw.nc.flush()]);
    await waitUntil(() => received.length === 2);
    expect(received.sort()).toEqual([subjects.membership(), subjects.nodePackets(1)].sort());
    expect(coordinator.violations).toEqual([]);
    expect(sw.violations).toEqual([]);
  });
});

describe("the switch's echo subject (bench's NATS floor; real nats-server)", () => {
  /** The switch subscribes to `echo` and answers; the coordinator (as the CLI does) asks once. */
  async function echoOnce(server: NatsServerHandle, echo: string): Promise<{ answered: boolean; violations: string[] }> {
    const sw = await as(identity('switch', '0'), server);
    // a refused subscription reaches its callback as an error (and may reach the status stream too)
    sw.nc.subscribe(echo, { callback: (e, m) => void (e ? sw.violations.push(String(e)) : m.respond(m.data)) });
    await sw.nc.flush();
    const asker = await as(identity('coordinator', 'c0'), server);
    const answered = await asker.nc.request(echo, new Uint8Array([5]), { timeout: 1_000 }).then(
      (m) => m.data[0] === 5,
      () => false,
    );
    if (!answered) await waitUntil(() => sw.violations.length > 0);
    return { answered, violations: sw.violations };
  }

  it('lets the switch answer on its own rack’s echo subject (reply through the inbox) and nothing else', async () => {
    expect(await echoOnce(nats, subjects.switchEcho(0))).toEqual({ answered: true, violations: [] });
    const other = await echoOnce(nats, subjects.switchEcho(1));
    expect(other.answered).toBe(false);
    expect(other.violations.some((v) => v.includes(subjects.switchEcho(1)))).toBe(true);
    // a compute node cannot stand in for the switch's echo
    const node1 = await as(identity('compute', '1'));
    node1.nc.subscribe(subjects.switchEcho(0), { callback: (e) => void (e && node1.violations.push(String(e))) });
    await node1.nc.flush();
    await waitUntil(() => node1.violations.length > 0);
    expect(node1.violations.some((v) => v.includes(subjects.switchEcho(0)))).toBe(true);
  });

  it('catches switch permissions without the echo grant (mutant): the floor request goes unanswered', async () => {
    const mutant = await serverWith((subs, service) => {
      const p = permissionsFor(subs, service);
      return service.role === 'switch' ? { ...p, subscribe: p.subscribe.filter((s) => s !== subs.switchEcho(0)) } : p;
    });
    try {
      const r = await echoOnce(mutant, subjects.switchEcho(0));
      expect(r.answered).toBe(false);
      expect(r.violations.some((v) => v.includes(subjects.switchEcho(0)))).toBe(true);
    } finally {
      await mutant.stop();
    }
  });
});

describe('switch input limited to the racks a compute node talks to (real nats-server)', () => {
  /** Compute node `id` publishes into rack 1's switch, then into rack 0's; what the coordinator hears. */
  async function publishIntoRacks(server: NatsServerHandle, id: string): Promise<{ heard: string[]; violations: string[] }> {
    const observer = await as(identity('coordinator', 'c0'), server);
    const heard: string[] = [];
    observer.nc.subscribe(`${subjects.prefix}.sw.*.in`, { callback: (_e, m) => void heard.push(m.subject) });
    await observer.nc.flush();
    const node = await as(identity('compute', id), server);
    node.nc.publish(subjects.switchIn(1), new Uint8Array([1]));
    node.nc.publish(subjects.switchIn(0), new Uint8Array([1]));
    await node.nc.flush();
    // Rack 0's input is allowed to every node here and published last on one connection.
    await waitUntil(() => heard.includes(subjects.switchIn(0)));
    if (!heard.includes(subjects.switchIn(1))) await waitUntil(() => node.violations.length > 0);
    return { heard, violations: node.violations };
  }

  it("refuses another rack's switch input to a node of rack 0 and takes its own", async () => {
    const r = await publishIntoRacks(nats, '1');
    expect(r.heard).toEqual([subjects.switchIn(0)]);
    expect(r.violations.filter((v) => v.includes(subjects.switchIn(1)))).toHaveLength(1);
  });

  it('takes every listed rack from a node configured with switchRacks', async () => {
    const r = await publishIntoRacks(nats, '3');
    expect(r.heard.sort()).toEqual([subjects.switchIn(0), subjects.switchIn(1)]);
    expect(r.violations).toEqual([]);
  });

  it("catches the any-rack grant (mutant: compute may publish lf.*.sw.*.in)", async () => {
    const anyRack = `${subjects.prefix}.sw.*.in`;
    const mutant = await serverWith((subs, service) => {
      const p = permissionsFor(subs, service);
      return service.role === 'compute' ? { ...p, publish: [...p.publish, anyRack] } : p;
    });
    try {
      const r = await publishIntoRacks(mutant, '1');
      expect(r.heard.sort()).toEqual([subjects.switchIn(0), subjects.switchIn(1)]);
    } finally {
      await mutant.stop();
    }
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
}
