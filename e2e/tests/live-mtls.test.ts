import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ChannelCredentials, ServiceError } from '@grpc/grpc-js';
import { MemoryQueuePair, channelCredentialsFor, createSubjects, loadTlsMaterial, silentLogger } from '@lockfabric/live';
import type { TlsMaterial } from '@lockfabric/live';
import { createClusterCa, issueCertificate, isAlive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { probePlaintextNats } from '@lockfabric/testkit';
import { connect, nkeyAuthenticator, nkeys, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { metric } from './live-chaos-support.js';
import { withLiveCluster } from './live-cluster.js';

// Mutual TLS on a cluster of real processes (TLS is the default of every live cluster): a peer
// without a certificate, one from another CA and one with the wrong role are refused by each
// kind of gRPC service, counted, and the cluster keeps serving its operator. On the same cluster
// (one start, for CI time): NATS over TLS, NKey auth and per-service permissions.

/** The one-byte payload of every test publish: no service decodes it as a valid message. */
const MARK = 0xff;

/** TLS options trusting the CA of the cluster in `dir` (its NATS requires TLS). */
const natsTls = (dir: string) => ({ tls: { ca: readFileSync(join(dir, 'nats', 'ca.crt'), 'utf8') } });

async function natsAs(url: string, seedFile: string, open: NatsConnection[]): Promise<{ nc: NatsConnection; refused: string[] }> {
  const seed = readFileSync(seedFile, 'utf8').trim();
  const ca = natsTls(join(seedFile, '..', '..'));
  const nc = await connect({ servers: url, maxReconnectAttempts: 0, authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)), ...ca });
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
    if (waited > 20_000) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const MEMORY_DESCRIBE = '/lockfabric.v1.MemoryService/Describe';
const LOCK_RESET = '/lockfabric.v1.LockAdminService/ResetTable';
const SWITCH_RESET = '/lockfabric.v1.SwitchControlService/Reset';
const COORDINATOR_STATUS = '/lockfabric.v1.CoordinatorService/Status';

type Outcome = 'ok' | 'unauthenticated' | 'permission-denied' | `code ${number}`;

function call(address: string, creds: ChannelCredentials, path: string): Promise<{ outcome: Outcome; details: string }> {
  const client = new Client(address, creds);
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, (b: Uint8Array) => Buffer.from(b), (b: Buffer) => b, new Uint8Array(0), { deadline: Date.now() + 20_000 }, (error: ServiceError | null) => {
      client.close();
      const outcome: Outcome = !error ? 'ok' : error.code === GrpcStatus.UNAUTHENTICATED ? 'unauthenticated' : error.code === GrpcStatus.PERMISSION_DENIED ? 'permission-denied' : `code ${error.code}`;
      resolve({ outcome, details: error?.details ?? '' });
    });
  });
}

describe('live: mutual TLS and the peer guard on every kind of gRPC service', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let scratch: string;
  let memory: ProcessRecord;
  let coordinator: ProcessRecord;
  let sw: ProcessRecord;
  const tls = (name: string) => join(cluster.dir, 'tls', `${name}.crt`);
  let foreign: TlsMaterial;
  let compute: TlsMaterial;

  beforeAll(async () => {
    cluster = await withLiveCluster({ computeNodes: 1 });
    memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
    sw = cluster.state.processes.find((p) => p.role === 'switch')!;
    const computeRecord = cluster.state.processes.find((p) => p.role === 'compute')!;
    compute = loadTlsMaterial({ ca: join(cluster.dir, 'tls', 'ca.crt'), cert: tls(computeRecord.name), key: tls(computeRecord.name).replace(/\.crt$/, '.key') });
    scratch = mkdtempSync(join(tmpdir(), 'lockfabric-foreign-'));
    const other = issueCertificate(createClusterCa(scratch, 'foreign'), 'operator', { role: 'operator', node: 'cli' });
    foreign = { ...loadTlsMaterial(other), ca: readFileSync(join(cluster.dir, 'tls', 'ca.crt')) };
  });
  const nats: NatsConnection[] = [];
  afterAll(async () => {
    await Promise.all(nats.map((nc) => nc.close().catch(() => undefined)));
    await cluster?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('refuses no certificate, another CA and a wrong role at the memory node, lock admin, switch control and coordinator; counts them', async () => {
    const noCert = credentials.createSsl(readFileSync(join(cluster.dir, 'tls', 'ca.crt')), null, null, { checkServerIdentity: () => undefined });
    const targets = [
      { process: memory, path: MEMORY_DESCRIBE },
      { process: coordinator, path: LOCK_RESET },
      { process: sw, path: SWITCH_RESET },
      { process: coordinator, path: COORDINATOR_STATUS },
    ];
    const before = await Promise.all([memory, coordinator, sw].map((p) => metric(p, 'lockfabric_grpc_refused_total')));
    // The wrong role: a memory node may not read another memory node's table; a compute node may
    // not write control state. (A compute node may read coordinator status: no wrong role there.)
    const memoryCert = loadTlsMaterial({ ca: join(cluster.dir, 'tls', 'ca.crt'), cert: tls(memory.name), key: tls(memory.name).replace(/\.crt$/, '.key') });
    const seen: Record<string, Outcome> = {};
    for (const { process, path } of targets) {
      const address = `127.0.0.1:${process.grpc}`;
      seen[`${path} no-cert`] = (await call(address, noCert, path)).outcome;
      seen[`${path} foreign-ca`] = (await call(address, channelCredentialsFor(foreign), path)).outcome;
      if (path === COORDINATOR_STATUS) continue;
      const wrong = await call(address, channelCredentialsFor(path === MEMORY_DESCRIBE ? memoryCert : compute), path);
      seen[`${path} wrong-role`] = wrong.outcome;
      expect(wrong.details).toMatch(/role (memory|compute)-node may not call this/);
    }
    expect(seen).toEqual({
      [`${MEMORY_DESCRIBE} no-cert`]: 'unauthenticated',
      [`${MEMORY_DESCRIBE} foreign-ca`]: 'unauthenticated',
      [`${MEMORY_DESCRIBE} wrong-role`]: 'permission-denied',
      [`${LOCK_RESET} no-cert`]: 'unauthenticated',
      [`${LOCK_RESET} foreign-ca`]: 'unauthenticated',
      [`${LOCK_RESET} wrong-role`]: 'permission-denied',
      [`${SWITCH_RESET} no-cert`]: 'unauthenticated',
      [`${SWITCH_RESET} foreign-ca`]: 'unauthenticated',
      [`${SWITCH_RESET} wrong-role`]: 'permission-denied',
      [`${COORDINATOR_STATUS} no-cert`]: 'unauthenticated',
      [`${COORDINATOR_STATUS} foreign-ca`]: 'unauthenticated',
    });
    // Memory: 3 refusals; coordinator: 3 (reset) + 2 (status); switch: 3.
    const after = await Promise.all([memory, coordinator, sw].map((p) => metric(p, 'lockfabric_grpc_refused_total')));
    expect(after).toEqual([before[0]! + 3, before[1]! + 5, before[2]! + 3]);
    for (const p of [memory, coordinator, sw]) expect(isAlive(p.pid)).toBe(true);

    // Legitimate peers keep working: this process is the cluster's operator.
    const operator = channelCredentialsFor(loadTlsMaterial({ ca: join(cluster.dir, 'tls', 'ca.crt'), cert: tls('operator'), key: tls('operator').replace(/\.crt$/, '.key') }));
    expect((await call(`127.0.0.1:${memory.grpc}`, operator, MEMORY_DESCRIBE)).outcome).toBe('ok');
    expect((await call(`127.0.0.1:${coordinator.grpc}`, operator, COORDINATOR_STATUS)).outcome).toBe('ok');
    expect((await call(`127.0.0.1:${coordinator.grpc}`, channelCredentialsFor(compute), COORDINATOR_STATUS)).outcome).toBe('ok');
  }, 120_000);

  it('`lockfabric locks reset` without the operator role fails with a clear error and leaves the lock table as it was', async () => {
    // A word in use: lock 0 of the table holds 7.
    const qp = await MemoryQueuePair.connect(`127.0.0.1:${memory.grpc}`, 99, { logger: silentLogger });
    const at = { node: 0, region: 0, rkey: (await qp.describe()).regions.find((r) => r.region === 0)!.rkey, offset: 0 };
    try {
      expect((await qp.post([{ op: 'cas', addr: at, compare: 0n, swap: 7n }]))[0]).toMatchObject({ status: 'ok' });
      const key = tls(`compute-${cluster.state.processes.find((p) => p.role === 'compute')!.node}`).replace(/\.crt$/, '.key');
      const env = { ...process.env, LOCKFABRIC_TLS_CA: join(cluster.dir, 'tls', 'ca.crt'), LOCKFABRIC_TLS_CERT: key.replace(/\.key$/, '.crt'), LOCKFABRIC_TLS_KEY: key };
      const refusedBefore = await metric(coordinator, 'lockfabric_grpc_refused_total', 'reason="wrong-role"');
      const refused = await runCli(['locks', 'reset', '--dir', cluster.dir, '--locks', '16'], env);
      expect(await metric(coordinator, 'lockfabric_grpc_refused_total', 'reason="wrong-role"')).toBe(refusedBefore + 1);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('role compute-node may not call this');
      expect((await qp.post([{ op: 'faa', addr: at, add: 0n }]))[0]).toMatchObject({ status: 'ok', value: 7n });
      expect(readFileSync(coordinator.log, 'utf8')).not.toContain('audit: compute-node');
    } finally {
      qp.close();
    }
  }, 120_000);

  it('NATS refuses a connection without credentials and one with a key the server does not know', async () => {
    await expect(connect({ servers: cluster.state.natsUrl, maxReconnectAttempts: 0, ...natsTls(cluster.dir) })).rejects.toThrow(/authorization/i);
    const stranger = nkeyAuthenticator(nkeys.createUser().getSeed());
    await expect(connect({ servers: cluster.state.natsUrl, maxReconnectAttempts: 0, authenticator: stranger, ...natsTls(cluster.dir) })).rejects.toThrow(/authorization/i);
  });

  it('NATS is TLS only: a plaintext client is cut off before it is read; a client trusting another CA is refused', async () => {
    const url = new URL(cluster.state.natsUrl);
    expect(await probePlaintextNats(url.hostname, Number(url.port))).toEqual({ tlsRequired: true, answer: 'closed' });
    const operator = nkeyAuthenticator(new TextEncoder().encode(readFileSync(join(cluster.dir, 'nats', 'operator.seed'), 'utf8').trim()));
    const otherCa = readFileSync(join(scratch, 'ca.crt'), 'utf8');
    await expect(connect({ servers: cluster.state.natsUrl, maxReconnectAttempts: 0, authenticator: operator, tls: { ca: otherCa } })).rejects.toThrow(/certificate|verify/i);
    // The services connected over TLS: each says so in its log.
    const services = cluster.state.processes.filter((p) => ['memory', 'compute', 'switch', 'coordinator'].includes(p.role));
    expect(services.filter((p) => !readFileSync(p.log, 'utf8').includes('NATS over TLS, server verified against')).map((p) => p.name)).toEqual([]);
  });

  it('a bench on this cluster runs over NATS TLS and mutual-TLS gRPC, and its checker finds no violation', async () => {
    const r = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--protocol', 'caslock', '--clients', '4', '--operations', '200', '--floor-ops', '0', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { violations: number; acquires: number; tls: string; natsTls: string };
    expect(report).toMatchObject({ violations: 0, acquires: 200, tls: 'mtls', natsTls: 'tls' });
  }, 120_000);

  it("NATS refuses a compute node's heartbeat, packet, mailbox message and eavesdropping as another node, another rack's switch input, its membership and recovery orders; the coordinator may publish them", async () => {
    const subjects = createSubjects(cluster.state.cluster);
    const seed = (name: string) => join(cluster.dir, 'nats', `${name}.seed`);
    const self = cluster.state.processes.find((p) => p.role === 'compute')!.node;
    const other = 99; // any other node id: permissions are about subjects, not live nodes
    const observer = await natsAs(cluster.state.natsUrl, seed('operator'), nats);
    const heard: string[] = [];
    // Only our marker payload counts: the real services publish heartbeats on these subjects too.
    observer.nc.subscribe(`${subjects.prefix}.>`, { callback: (_e, m) => void (m.data.length === 1 && m.data[0] === MARK ? heard.push(m.subject) : undefined) });
    await observer.nc.flush();
    const forged = [subjects.heartbeat('compute', String(other)), subjects.heartbeat('switch', String(sw.node)), subjects.nodePackets(other), subjects.nodeMessages(self, other), subjects.membership(), subjects.recovery('failure'), subjects.recovery('order'), subjects.switchIn(1)];
    const node = await natsAs(cluster.state.natsUrl, seed(`compute-${self}`), nats);
    for (const subject of forged) node.nc.publish(subject, new Uint8Array([MARK]));
    node.nc.subscribe(subjects.nodePackets(other));
    // Its own rack's switch input (rack 0) is allowed; another rack's (1, above) is not.
    node.nc.publish(subjects.switchIn(0), new Uint8Array([MARK]));
    node.nc.publish(subjects.heartbeat('compute', String(self)), new Uint8Array([MARK]));
    await node.nc.flush();
    await until('every forged publish and the eavesdropping subscription refused', () => node.refused.length >= forged.length + 1);
    // Its own heartbeat is allowed and was published after the forgeries, on one connection.
    await until('its own heartbeat heard', () => heard.includes(subjects.heartbeat('compute', String(self))));
    expect(node.refused.sort()).toEqual([...forged.map((s) => `publish ${s}`), `subscription ${subjects.nodePackets(other)}`].sort());
    expect(heard.filter((s) => forged.includes(s))).toEqual([]);
    expect(heard).toContain(subjects.switchIn(0));

    const coordinatorSeed = await natsAs(cluster.state.natsUrl, seed(coordinator.name), nats);
    const allowed = [subjects.membership(), subjects.recovery('order')];
    for (const subject of allowed) coordinatorSeed.nc.publish(subject, new Uint8Array([MARK]));
    await coordinatorSeed.nc.flush();
    await until('the coordinator’s membership and recovery order heard', () => allowed.every((s) => heard.includes(s)));
    expect(coordinatorSeed.refused).toEqual([]);
    // The garbage was dropped, not fatal: every service is still running.
    expect(cluster.state.processes.filter((p) => !isAlive(p.pid)).map((p) => p.name)).toEqual([]);
  });

  it('a CLI command without an operator certificate fails at once naming the TLS problem (exit 2), not "unreachable"', async () => {
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
