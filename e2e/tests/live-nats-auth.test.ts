import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSubjects } from '@lockfabric/live';
import { isAlive, type ProcessRecord } from '@lockfabric/workload-driver';
import { connect, nkeyAuthenticator, nkeys, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { withLiveCluster } from './live-cluster.js';

// NATS authentication and least-privilege permissions on a cluster of real processes (issue 19
// item 2; on by default wherever TLS is). Each identity is the seed `cluster up` gave a service.

const SETTLE_MS = 20_000;
/** The one-byte payload of every test publish: no service decodes it as a valid message. */
const MARK = 0xff;

describe('live: NATS NKey auth and per-service permissions', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  const open: NatsConnection[] = [];
  let computes: ProcessRecord[];
  let sw: ProcessRecord;

  const seed = (name: string) => readFileSync(join(cluster.dir, 'nats', `${name}.seed`), 'utf8').trim();
  async function as(name: string): Promise<{ nc: NatsConnection; refused: string[] }> {
    const nc = await connect({ servers: cluster.state.natsUrl, maxReconnectAttempts: 0, authenticator: nkeyAuthenticator(new TextEncoder().encode(seed(name))) });
    open.push(nc);
    const refused: string[] = [];
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error' && s.error instanceof PermissionViolationError) refused.push(`${s.error.operation} ${s.error.subject}`);
    })();
    return { nc, refused };
  }
  /** Resolves once `done()` holds; fails the test (not a timing decision) if it never does. */
  async function until(what: string, done: () => boolean): Promise<void> {
    for (let waited = 0; !done(); waited += 20) {
      if (waited > SETTLE_MS) throw new Error(`never happened: ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  beforeAll(async () => {
    cluster = await withLiveCluster({ computeNodes: 2 });
    computes = cluster.state.processes.filter((p) => p.role === 'compute');
    sw = cluster.state.processes.find((p) => p.role === 'switch')!;
  });
  afterAll(async () => {
    await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
    await cluster?.stop();
  });

  it('refuses a connection without credentials and one with a key the server does not know', async () => {
    await expect(connect({ servers: cluster.state.natsUrl, maxReconnectAttempts: 0 })).rejects.toThrow(/authorization/i);
    const stranger = nkeyAuthenticator(nkeys.createUser().getSeed());
    await expect(connect({ servers: cluster.state.natsUrl, maxReconnectAttempts: 0, authenticator: stranger })).rejects.toThrow(/authorization/i);
  });

  it("refuses a compute node's heartbeat, packet and mailbox eavesdropping as another node, and its membership and recovery orders; the coordinator may publish them", async () => {
    const subjects = createSubjects(cluster.state.cluster);
    const [self, other] = computes.map((c) => c.node) as [number, number];
    const observer = await as('operator');
    const heard: string[] = [];
    // Only our marker payload counts: the real services publish heartbeats on these subjects too.
    observer.nc.subscribe(`${subjects.prefix}.>`, { callback: (_e, m) => void (m.data.length === 1 && m.data[0] === MARK ? heard.push(m.subject) : undefined) });
    await observer.nc.flush();

    const forged = [
      subjects.heartbeat('compute', String(other)),
      subjects.heartbeat('switch', String(sw.node)),
      subjects.nodePackets(other),
      subjects.membership(),
      subjects.recovery('failure'),
      subjects.recovery('order'),
    ];
    const node = await as(`compute-${self}`);
    // Garbage payloads: if one ever got through, the services would drop it as malformed.
    for (const subject of forged) node.nc.publish(subject, new Uint8Array([MARK]));
    node.nc.subscribe(subjects.nodePackets(other));
    node.nc.publish(subjects.heartbeat('compute', String(self)), new Uint8Array([MARK]));
    await node.nc.flush();
    await until('every forged publish and the eavesdropping subscription refused', () => node.refused.length >= forged.length + 1);
    // Its own heartbeat subject is allowed and was published after the forgeries, on one connection.
    await until('its own heartbeat heard', () => heard.includes(subjects.heartbeat('compute', String(self))));
    expect(node.refused.sort()).toEqual([...forged.map((s) => `publish ${s}`), `subscription ${subjects.nodePackets(other)}`].sort());
    expect(heard.filter((s) => forged.includes(s))).toEqual([]);

    const coordinator = await as(`coordinator-${cluster.state.processes.find((p) => p.role === 'coordinator')!.node}`);
    const allowed = [subjects.membership(), subjects.recovery('order')];
    for (const subject of allowed) coordinator.nc.publish(subject, new Uint8Array([MARK]));
    await coordinator.nc.flush();
    await until('the coordinator’s membership and recovery order heard', () => allowed.every((s) => heard.includes(s)));
    expect(coordinator.refused).toEqual([]);
    // The garbage was dropped, not fatal: every service is still running.
    expect(cluster.state.processes.filter((p) => !isAlive(p.pid)).map((p) => p.name)).toEqual([]);
  });

  it('a CLI command without an operator certificate fails at once naming the TLS problem (exit 2), not "unreachable"', async () => {
    const coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
    const memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    const cwd = mkdtempSync(join(tmpdir(), 'lockfabric-nocert-'));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LOCKFABRIC_')));
    try {
      const r = await runCli(['locks', 'reset', '--coordinator-at', `127.0.0.1:${coordinator.grpc}`, '--memory-nodes-at', `127.0.0.1:${memory.grpc}`, '--locks', '16'], env, cwd);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`127.0.0.1:${coordinator.grpc} requires mutual TLS`);
      expect(r.stderr).not.toMatch(/unreachable|within \d+ ms/);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
