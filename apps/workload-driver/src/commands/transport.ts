import { TRANSPORT_BENCH_CLUSTER } from '../cluster/nats-auth.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSubjects, grpcRoundTripUs, grpcStreamThroughput, loadTlsMaterial, natsPubSubThroughput, natsRoundTripUs, startEchoServer } from '@lockfabric/live';
import type { TlsMaterial } from '@lockfabric/live';
import { createClusterCa, issueCertificate } from '../cluster/certificates.js';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { locateNatsServer, startNatsServer } from '@lockfabric/nats-server';
import { freePort } from '../cluster/local-cluster.js';
import { renderTable } from '../report/table.js';
import { output } from './context.js';
import { MissingToolError } from '../cluster/errors.js';

export const TRANSPORT_HELP = `lockfabric transport — the raw limits of this machine's transports

  --messages N   messages per measurement (default 20000)
  --nats-url U   measure this NATS instead of starting nats-server
  --json         print one JSON object: grpcRttUs, grpcStreamOpsPerSec, grpcTlsRttUs,
                 grpcTlsStreamOpsPerSec (the same over mutual TLS), natsRttUs, natsPubSubMsgsPerSec`;

export interface TransportFigures {
  readonly grpcRttUs: number;
  readonly grpcStreamOpsPerSec: number;
  /** The same two over mutual TLS, with certificates from a throwaway CA. */
  readonly grpcTlsRttUs: number;
  readonly grpcTlsStreamOpsPerSec: number;
  readonly natsRttUs: number;
  readonly natsPubSubMsgsPerSec: number;
}

/** Bare gRPC stream and NATS figures on this machine, the yardstick every protocol is divided by. */
export async function measureTransport(messages: number, natsUrl?: string): Promise<TransportFigures> {
  const echo = await startEchoServer();
  const certs = throwawayCertificates();
  const tlsEcho = await startEchoServer({ tls: certs.server });
  let nats: { url: string; stop(): Promise<void> } | undefined;
  try {
    const grpcRttUs = await grpcRoundTripUs(echo.address, { messages: Math.max(1000, Math.floor(messages / 4)) });
    const grpcStreamOpsPerSec = await grpcStreamThroughput(echo.address, { messages });
    const grpcTlsRttUs = await grpcRoundTripUs(tlsEcho.address, { messages: Math.max(1000, Math.floor(messages / 4)), tls: certs.client });
    const grpcTlsStreamOpsPerSec = await grpcStreamThroughput(tlsEcho.address, { messages, tls: certs.client });
    const url = natsUrl ?? (nats = await startNatsServer({ freePort })).url;
    const subjects = createSubjects(TRANSPORT_BENCH_CLUSTER);
    const natsRttUs = await natsRoundTripUs({ servers: url, subjects, messages: Math.max(1000, Math.floor(messages / 4)) });
    const natsPubSubMsgsPerSec = await natsPubSubThroughput({ servers: url, subjects, messages });
    return { grpcRttUs, grpcStreamOpsPerSec, grpcTlsRttUs, grpcTlsStreamOpsPerSec, natsRttUs, natsPubSubMsgsPerSec };
  } finally {
    await echo.close();
    await tlsEcho.close();
    await nats?.stop();
  }
}

/** A CA, a server and a client certificate in a temp dir that is removed at once (they are kept in memory). */
function throwawayCertificates(): { server: TlsMaterial; client: TlsMaterial } {
  const dir = mkdtempSync(join(tmpdir(), 'lockfabric-transport-'));
  try {
    const ca = createClusterCa(dir, 'transport');
    return {
      server: loadTlsMaterial(issueCertificate(ca, 'echo', { role: 'memory-node', node: 'echo' })),
      client: loadTlsMaterial(issueCertificate(ca, 'client', { role: 'compute-node', node: 'client' })),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function transportCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('transport', argv, { messages: { type: 'string' }, 'nats-url': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values['help']) return (console.log(TRANSPORT_HELP), 0);
  const reader = new FlagReader(values);
  const messages = reader.number('messages', 20_000, { integer: true, min: 100 });
  reader.done();
  const natsUrl = typeof values['nats-url'] === 'string' ? values['nats-url'] : process.env['NATS_URL'];
  if (!natsUrl && !locateNatsServer()) throw new MissingToolError('nats-server', 'measuring NATS needs nats-server on PATH (apt-get install nats-server) or --nats-url');
  const out = output(values['json'] === true);
  out.note('measuring bare gRPC stream and NATS on this machine…');
  const figures = await measureTransport(messages, natsUrl);
  if (out.json) console.log(JSON.stringify(figures));
  else
    console.log(
      renderTable(
        ['transport', 'figure', 'value'],
        [
          ['gRPC stream', 'round trip (µs)', figures.grpcRttUs],
          ['gRPC stream', 'pipelined msgs/s', Math.round(figures.grpcStreamOpsPerSec)],
          ['gRPC stream, mutual TLS', 'round trip (µs)', figures.grpcTlsRttUs],
          ['gRPC stream, mutual TLS', 'pipelined msgs/s', Math.round(figures.grpcTlsStreamOpsPerSec)],
          ['NATS', 'request/reply round trip (µs)', figures.natsRttUs],
          ['NATS', 'pub/sub msgs/s', Math.round(figures.natsPubSubMsgsPerSec)],
        ],
      ),
    );
  return 0;
}
