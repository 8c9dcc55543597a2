import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { assertTransportSecurityMatches, configureProcessTls, loadTlsMaterial, probeTls, serverCredentialsFor, silentLogger } from '@lockfabric/live';
import type { TlsMaterial } from '@lockfabric/live';
import { ConfigError } from '@lockfabric/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterCa, issueCertificate } from './certificates.js';
import { freePort } from './local-cluster.js';

// The fail-fast check of a CLI command against real gRPC servers on real ports: one with mutual
// TLS, one plaintext, and a port nobody listens on (no 10 s "unreachable" for a
// missing certificate). Each expectation is two-sided, so a check that always or never refuses fails.

let dir: string;
let operator: TlsMaterial;
const servers: Server[] = [];
let tlsAt: string;
let plainAt: string;
let closedAt: string;

async function serve(credentials: ServerCredentials): Promise<string> {
  const server = new Server();
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))));
  servers.push(server);
  return `127.0.0.1:${port}`;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lockfabric-probe-'));
  const ca = createClusterCa(dir, 'probe');
  operator = loadTlsMaterial(issueCertificate(ca, 'operator', { role: 'operator', node: 'cli' }));
  tlsAt = await serve(serverCredentialsFor(loadTlsMaterial(issueCertificate(ca, 'memory-0', { role: 'memory-node', node: '0' }))));
  plainAt = await serve(ServerCredentials.createInsecure());
  closedAt = `127.0.0.1:${await freePort()}`;
});
afterAll(() => {
  for (const s of servers) s.forceShutdown();
  configureProcessTls(undefined, silentLogger);
  rmSync(dir, { recursive: true, force: true });
});

describe('transport security probe', () => {
  it('tells a TLS server, a plaintext one and a closed port apart', async () => {
    expect(await probeTls(tlsAt)).toBe('tls');
    expect(await probeTls(plainAt)).toBe('plaintext');
    expect(await probeTls(closedAt)).toBe('unreachable');
  });

  it('without a certificate: refuses the mutual-TLS server by name, accepts plaintext and leaves a closed port alone', async () => {
    configureProcessTls(undefined, silentLogger);
    const refused = await assertTransportSecurityMatches([tlsAt, plainAt, closedAt]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).issues).toHaveLength(1);
    expect((refused as ConfigError).issues[0]).toContain(`${tlsAt} requires mutual TLS`);
    expect((refused as ConfigError).issues[0]).toContain('LOCKFABRIC_TLS_CERT');
    await expect(assertTransportSecurityMatches([plainAt, closedAt])).resolves.toBeUndefined();
  });

  it('with the operator certificate: accepts the TLS server and names the plaintext one', async () => {
    configureProcessTls(operator, silentLogger);
    await expect(assertTransportSecurityMatches([tlsAt, closedAt])).resolves.toBeUndefined();
    await expect(assertTransportSecurityMatches([plainAt])).rejects.toThrow(`${plainAt} speaks plaintext gRPC`);
  });
});
