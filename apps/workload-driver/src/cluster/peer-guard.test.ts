import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Server, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerCredentials, ServiceError } from '@grpc/grpc-js';
import { ACCESS_POLICY, PeerGuard, channelCredentialsFor, loadTlsMaterial, rawMethod, serverCredentialsFor, silentLogger } from '@lockfabric/live';
import type { MethodRule, TlsMaterial } from '@lockfabric/live';
import { RealClock } from '@lockfabric/realtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterCa, issueCertificate } from './certificates.js';

// The peer guard end to end in one process: real certificates from the cluster CA code, a real
// TLS gRPC server on a real port, and one client per kind of peer. Each mutant is a broken
// variant of the guard or its credentials; the same probe must tell it from the real one.

const RESET = rawMethod('/lockfabric.v1.LockAdminService/ResetTable', false, false);
const STATUS = rawMethod('/lockfabric.v1.CoordinatorService/Status', false, false);

let dir: string;
let server: TlsMaterial;
let operator: TlsMaterial;
let computeNode: TlsMaterial;
let foreign: TlsMaterial;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'lockfabric-tls-'));
  const ca = createClusterCa(join(dir, 'ca'), 'test');
  const other = createClusterCa(join(dir, 'other'), 'other');
  server = loadTlsMaterial(issueCertificate(ca, 'coordinator-9', { role: 'coordinator', node: '9' }));
  operator = loadTlsMaterial(issueCertificate(ca, 'operator', { role: 'operator', node: 'cli' }));
  computeNode = loadTlsMaterial(issueCertificate(ca, 'compute-1', { role: 'compute-node', node: '1' }));
  // Another CA's operator, who trusts the real CA for the server's side of the handshake.
  const stranger = loadTlsMaterial(issueCertificate(other, 'operator', { role: 'operator', node: 'cli' }));
  foreign = { ...stranger, ca: server.ca };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Outcome = 'ok' | 'unauthenticated' | 'permission-denied' | `other ${number}`;

function call(address: string, creds: ReturnType<typeof credentials.createInsecure>, path: string): Promise<Outcome> {
  const client = new Client(address, creds);
  return new Promise<Outcome>((resolve) => {
    client.makeUnaryRequest(path, (b: Uint8Array) => Buffer.from(b), (b: Buffer) => b, new Uint8Array(0), (error: ServiceError | null) => {
      client.close();
      if (!error) resolve('ok');
      else if (error.code === GrpcStatus.UNAUTHENTICATED) resolve('unauthenticated');
      else if (error.code === GrpcStatus.PERMISSION_DENIED) resolve('permission-denied');
      else resolve(`other ${error.code}`);
    });
  });
}

/** What each kind of peer gets from a control write and a read on a server with this guard and these credentials. */
async function probe(guard: PeerGuard, serverCreds: ServerCredentials): Promise<Record<string, Outcome>> {
  const grpc = new Server({ interceptors: [guard.interceptor] });
  const answer = (_call: unknown, done: (e: null, r: Uint8Array) => void) => done(null, new Uint8Array(0));
  grpc.addService({ resetTable: RESET }, { resetTable: answer });
  grpc.addService({ status: STATUS }, { status: answer });
  const port = await new Promise<number>((resolve, reject) => grpc.bindAsync('127.0.0.1:0', serverCreds, (e, p) => (e ? reject(e) : resolve(p))));
  const address = `127.0.0.1:${port}`;
  try {
    return {
      operatorReset: await call(address, channelCredentialsFor(operator), RESET.path),
      computeReset: await call(address, channelCredentialsFor(computeNode), RESET.path),
      computeStatus: await call(address, channelCredentialsFor(computeNode), STATUS.path),
      noCertStatus: await call(address, credentials.createSsl(server.ca, null, null, { checkServerIdentity: () => undefined }), STATUS.path),
      foreignCaReset: await call(address, channelCredentialsFor(foreign), RESET.path),
    };
  } finally {
    grpc.forceShutdown();
  }
}

const EXPECTED: Record<string, Outcome> = {
  operatorReset: 'ok',
  computeReset: 'permission-denied',
  computeStatus: 'ok',
  noCertStatus: 'unauthenticated',
  foreignCaReset: 'unauthenticated',
};

const guard = (options: { tlsOn?: boolean; policy?: Readonly<Record<string, MethodRule>> } = {}) =>
  new PeerGuard({ tlsOn: options.tlsOn ?? true, logger: silentLogger, clock: new RealClock(), ...(options.policy ? { policy: options.policy } : {}) });

describe('peer guard over mutual TLS', () => {
  it('serves the operator and a permitted role; refuses a wrong role, a peer without certificate and another CA; counts each refusal', async () => {
    const real = guard();
    expect(await probe(real, serverCredentialsFor(server))).toEqual(EXPECTED);
    expect(real.refusedByReason()).toEqual({ 'wrong-role': 1, 'no-identity': 2 });
    expect(real.audited).toBe(1); // the operator's reset; reads are not audited
  });

  it('mutant: a guard that skips the role check lets a compute node reset the lock table', async () => {
    const anyone = Object.fromEntries(Object.entries(ACCESS_POLICY).map(([path, rule]) => [path, { ...rule, roles: ['memory-node', 'compute-node', 'coordinator', 'switch', 'driver', 'operator'] as const }]));
    const outcome = await probe(guard({ policy: anyone }), serverCredentialsFor(server));
    expect(outcome.computeReset).toBe('ok');
    expect(outcome).not.toEqual(EXPECTED);
  });

  it('mutant: a guard that does not require an identity lets a peer without certificate and a foreign CA in', async () => {
    const outcome = await probe(guard({ tlsOn: false }), serverCredentialsFor(server));
    expect([outcome.noCertStatus, outcome.foreignCaReset]).toEqual(['ok', 'ok']);
    expect(outcome).not.toEqual(EXPECTED);
  });

  it('mutant: a server that never asks for the client certificate refuses even the operator', async () => {
    const { ServerCredentials } = await import('@grpc/grpc-js');
    const outcome = await probe(guard(), ServerCredentials.createSsl(server.ca, [{ cert_chain: server.cert, private_key: server.key }], false));
    expect(outcome.operatorReset).toBe('unauthenticated');
    expect(outcome).not.toEqual(EXPECTED);
  });
});
