import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probePlaintextNats, startNatsServer, type NatsServerHandle } from '@lockfabric/testkit';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterCa, issueNatsServerCertificate } from '../cluster/certificates.js';
import { natsServerTlsBlock } from '../cluster/nats-tls.js';
import { CutRelay } from './cut-relay.js';
import type { NatsTlsTermination } from './nats-tls-termination.js';

// The cut proxy on a TLS-only nats-server (real server, real TLS): it ends the client's TLS with its
// own certificate from the cluster CA and re-opens TLS upstream, so clients keep verifying the
// cluster CA and the proxy still reads frames, which a partial partition needs to drop deliveries.

const dir = mkdtempSync(join(tmpdir(), 'lf-cut-tls-'));
let server: NatsServerHandle;
let ca: string;
let termination: NatsTlsTermination;
const open: NatsConnection[] = [];
const relays: CutRelay[] = [];

beforeAll(async () => {
  const clusterCa = createClusterCa(join(dir, 'tls'), 'test');
  const files = issueNatsServerCertificate(clusterCa, 'nats-server');
  const proxy = issueNatsServerCertificate(clusterCa, 'cut-proxy');
  writeFileSync(join(dir, 'nats.conf'), natsServerTlsBlock(files));
  server = await startNatsServer({ args: ['-c', join(dir, 'nats.conf')] });
  ca = readFileSync(files.ca, 'utf8');
  termination = { cert: readFileSync(proxy.cert), key: readFileSync(proxy.key), ca };
});

afterAll(async () => {
  for (const nc of open) await nc.close().catch(() => undefined);
  for (const r of relays) await r.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A relay in front of the server; every client is attributed to `compute-1`. */
async function relay(natsTls?: NatsTlsTermination): Promise<{ relay: CutRelay; url: string; port: number }> {
  const r = await CutRelay.start({ routes: [{ name: 'nats', server: 'nats', listenPort: 0, upstreamPort: server.port, protocol: 'nats' }], attribute: () => 'compute-1', ...(natsTls ? { natsTls } : {}) });
  relays.push(r);
  return { relay: r, url: `nats://127.0.0.1:${r.ports['nats']}`, port: r.ports['nats']! };
}

/** Publishes `kept` and `dropped` twice from one client to a subscriber through the relay; what the subscriber got. */
async function roundTrip(url: string, timeout = 10_000): Promise<string[]> {
  const sub = await connect({ servers: url, maxReconnectAttempts: 0, timeout, tls: { ca } });
  const pub = await connect({ servers: server.url, maxReconnectAttempts: 0, timeout: 10_000, tls: { ca } });
  open.push(sub, pub);
  const got: string[] = [];
  sub.subscribe('t.>', { callback: (_e, m) => void got.push(m.subject) });
  await sub.flush();
  for (const s of ['t.dropped', 't.kept', 't.dropped', 't.kept', 't.end']) pub.publish(s, new Uint8Array([1]));
  await pub.flush();
  for (let i = 0; i < 400 && !got.includes('t.end'); i++) await new Promise((r) => setTimeout(r, 25));
  return got;
}

describe('cut proxy NATS TLS termination (real nats-server, TLS only)', () => {
  it('clients connect over TLS verified against the cluster CA, and a partial partition still drops chosen deliveries', async () => {
    const { relay: r, url, port } = await relay(termination);
    // The relay's port is TLS only too: a plaintext client gets INFO with tls_required and is cut off.
    expect(await probePlaintextNats('127.0.0.1', port)).toEqual({ tlsRequired: true, answer: 'closed' });
    r.dropSubjects('compute-1', ['t.dropped']);
    expect(await roundTrip(url)).toEqual(['t.kept', 't.kept', 't.end']);
    expect(r.status().drops).toEqual([{ target: 'compute-1', subjects: ['t.dropped'], dropped: 2 }]);
  });

  it('a client trusting another CA is refused by the proxy', async () => {
    const { url } = await relay(termination);
    const other = createClusterCa(join(dir, 'other'), 'other');
    const otherCa = readFileSync(join(other.dir, 'ca.crt'), 'utf8');
    await expect(connect({ servers: url, maxReconnectAttempts: 0, timeout: 10_000, tls: { ca: otherCa } })).rejects.toThrow(/certificate|verify/i);
  });

  it('catches a byte relay without termination (mutant): its frame reader cannot follow TLS, so the connection never comes up', async () => {
    const { relay: r, url } = await relay(undefined);
    r.dropSubjects('compute-1', ['t.dropped']);
    // The filter waits for a line end that TLS records never give: the handshake stalls (bounded wait).
    const outcome = await roundTrip(url, 1_500).then((got) => got.join(','), (error: unknown) => `failed: ${String(error)}`);
    expect(outcome).toMatch(/^failed: /);
  });
});
