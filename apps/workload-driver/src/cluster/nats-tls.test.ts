import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsAuthOptions, readNatsCa } from '@lockfabric/live';
import { probePlaintextNats, startNatsServer, type NatsServerHandle } from '@lockfabric/testkit';
import { connect, type ConnectionOptions } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterCa, issueNatsServerCertificate } from './certificates.js';
import { natsCaFile, operatorSeedFile, prepareLocalNatsAuth } from './cluster-nats.js';

// NATS over TLS as `cluster up` configures it, on a real nats-server: a plaintext client
// is refused, a client trusting another CA is refused, the operator connects; and a client set up
// for TLS refuses a server that offers none. Each check is run against a mutant to show it can fail.

const dir = mkdtempSync(join(tmpdir(), 'lf-nats-tls-'));
const servers: NatsServerHandle[] = [];
let auth: NonNullable<ReturnType<typeof prepareLocalNatsAuth>>;
let tlsServer: NatsServerHandle;

async function serve(configText: string, name: string): Promise<NatsServerHandle> {
  const file = join(dir, name);
  writeFileSync(file, configText);
  const server = await startNatsServer({ args: ['-c', file] });
  servers.push(server);
  return server;
}

async function tryConnect(server: NatsServerHandle, options: Partial<ConnectionOptions>): Promise<'connected' | string> {
  try {
    const nc = await connect({ servers: server.url, maxReconnectAttempts: 0, timeout: 10_000, ...options });
    await nc.close();
    return 'connected';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Mutant: the server config without its `tls {}` block (a plaintext server with the same users). */
const withoutTls = (text: string) => text.replace(/^tls \{[\s\S]*?^\}\n/m, '');

beforeAll(async () => {
  const ca = createClusterCa(join(dir, 'tls'), 'test');
  auth = prepareLocalNatsAuth(dir, { cluster: 'test', services: [{ name: 'compute-1', role: 'compute', id: '1', rack: 0 }] }, false, ca)!;
  tlsServer = await serve(readFileSync(auth.serverConfig, 'utf8'), 'tls.conf');
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

describe('NATS over TLS (cluster up)', () => {
  it('gives services the CA file with their seed', () => {
    expect(auth.flagsFor('compute-1')).toEqual([`--nats.seed-file=${join(dir, 'nats', 'compute-1.seed')}`, `--nats.ca-file=${natsCaFile(dir)}`]);
  });

  it('refuses a plaintext client before reading it; the mutant server without a tls block reads it', async () => {
    const refused = await probePlaintextNats('127.0.0.1', tlsServer.port);
    // nats-server reads the plaintext CONNECT as a bad TLS record and hangs up.
    expect(refused).toEqual({ tlsRequired: true, answer: 'closed' });
    const mutant = await serve(withoutTls(readFileSync(auth.serverConfig, 'utf8')), 'mutant.conf');
    // The mutant reads the plaintext CONNECT: only the missing NKey stops it.
    expect(await probePlaintextNats('127.0.0.1', mutant.port)).toEqual({ tlsRequired: false, answer: expect.stringMatching(/^-ERR .*Authorization/i) });
  });

  it('accepts the operator over TLS with the cluster CA and refuses one trusting another CA', async () => {
    const seed = readFileSync(operatorSeedFile(dir), 'utf8').trim();
    expect(await tryConnect(tlsServer, natsAuthOptions(seed, readNatsCa(natsCaFile(dir))))).toBe('connected');
    const other = createClusterCa(join(dir, 'other'), 'other');
    issueNatsServerCertificate(other, 'unused');
    const wrongCa = readFileSync(join(dir, 'other', 'ca.crt'), 'utf8');
    expect(await tryConnect(tlsServer, natsAuthOptions(seed, wrongCa))).toMatch(/certificate|self.signed|verify/i);
  });

  it('a client with a CA refuses a server without TLS (no silent downgrade); the mutant client without the CA connects', async () => {
    const seed = readFileSync(operatorSeedFile(dir), 'utf8').trim();
    const plaintext = await serve(withoutTls(readFileSync(auth.serverConfig, 'utf8')), 'plain.conf');
    expect(await tryConnect(plaintext, natsAuthOptions(seed, readNatsCa(natsCaFile(dir))))).toMatch(/tls/i);
    expect(await tryConnect(plaintext, natsAuthOptions(seed, undefined))).toBe('connected');
  });

  it('a CA file that is missing or not PEM is a configuration error naming it', () => {
    const bad = join(dir, 'bad.crt');
    writeFileSync(bad, 'not a certificate');
    expect(() => readNatsCa(bad)).toThrow(/nats\.caFile: .*bad\.crt holds no PEM certificate/);
    expect(() => readNatsCa(join(dir, 'absent.crt'))).toThrow(/nats\.caFile: cannot read/);
  });
});
