import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ChannelCredentials, ServiceError } from '@grpc/grpc-js';
import { MemoryQueuePair, channelCredentialsFor, loadTlsMaterial, silentLogger } from '@lockfabric/live';
import type { TlsMaterial } from '@lockfabric/live';
import { createClusterCa, issueCertificate, isAlive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { metric } from './live-chaos-support.js';
import { withLiveCluster } from './live-cluster.js';

// Mutual TLS on a cluster of real processes (TLS is the default of every live cluster): a peer
// without a certificate, one from another CA and one with the wrong role are refused by each
// kind of gRPC service, counted, and the cluster keeps serving its operator.

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
  afterAll(async () => {
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
});
