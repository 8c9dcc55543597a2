import { TRANSPORT_BENCH_CLUSTER } from '../cluster/nats-auth.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSubjects, grpcRoundTripStats, grpcStreamThroughput, loadTlsMaterial, natsPubSubThroughput, natsRoundTripStats, startEchoServer } from '@lockfabric/live';
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
  --json         print one JSON object: grpcRttUs, grpcRttMeanUs, grpcStreamOpsPerSec,
                 grpcTlsRttUs, grpcTlsRttMeanUs, grpcTlsStreamOpsPerSec (the same over mutual
                 TLS), natsRttUs, natsRttMeanUs, natsPubSubMsgsPerSec
  Round trips are the median (…RttUs) and the mean (…RttMeanUs) with one message in flight. The
  NATS round trip is in-CLI: requester and responder are two connections of this process, so the
  path is CLI → nats-server → CLI (a switch lock's path through the switch process is longer;
  bench --floor-ops measures that one).`;

export interface TransportFigures {
  /** gRPC stream round trip, median and mean (µs), one message in flight. */
  readonly grpcRttUs: number;
  readonly grpcRttMeanUs: number;
  readonly grpcStreamOpsPerSec: number;
  /** The same over mutual TLS, with certificates from a throwaway CA. */
  readonly grpcTlsRttUs: number;
  readonly grpcTlsRttMeanUs: number;
  readonly grpcTlsStreamOpsPerSec: number;
  /** NATS request/reply in-CLI (both ends connections of this process), median and mean (µs). */
  readonly natsRttUs: number;
  readonly natsRttMeanUs: number;
  readonly natsPubSubMsgsPerSec: number;
}

/** Bare gRPC stream and NATS figures on this machine, the yardstick every protocol is divided by. */
export async function measureTransport(messages: number, natsUrl?: string): Promise<TransportFigures> {
  const echo = await startEchoServer();
  const certs = throwawayCertificates();
  const tlsEcho = await startEchoServer({ tls: certs.server });
  let nats: { url: string; stop(): Promise<void> } | undefined;
  try {
    const rttMessages = Math.max(1000, Math.floor(messages / 4));
    const grpc = await grpcRoundTripStats(echo.address, { messages: rttMessages });
    const grpcStreamOpsPerSec = await grpcStreamThroughput(echo.address, { messages });
    const grpcTls = await grpcRoundTripStats(tlsEcho.address, { messages: rttMessages, tls: certs.client });
    const grpcTlsStreamOpsPerSec = await grpcStreamThroughput(tlsEcho.address, { messages, tls: certs.client });
    const url = natsUrl ?? (nats = await startNatsServer({ freePort })).url;
    const subjects = createSubjects(TRANSPORT_BENCH_CLUSTER);
    const natsRtt = await natsRoundTripStats({ servers: url, subjects, messages: rttMessages });
    const natsPubSubMsgsPerSec = await natsPubSubThroughput({ servers: url, subjects, messages });
    return {
      grpcRttUs: grpc.p50Us,
      grpcRttMeanUs: grpc.meanUs,
      grpcStreamOpsPerSec,
      grpcTlsRttUs: grpcTls.p50Us,
      grpcTlsRttMeanUs: grpcTls.meanUs,
      grpcTlsStreamOpsPerSec,
      natsRttUs: natsRtt.p50Us,
      natsRttMeanUs: natsRtt.meanUs,
      natsPubSubMsgsPerSec,
    };
  } finally {
    await echo.close();
    await tlsEcho.close();
    await nats?.stop();
  }
}

const us = (value: number) => value.toFixed(1);

/** The table `lockfabric transport` prints: round trips as median and mean, the NATS one named by its path. */
export function transportRows(f: TransportFigures): (string | number)[][] {
  return [
    ['gRPC stream', 'round trip p50 / mean (µs)', `${us(f.grpcRttUs)} / ${us(f.grpcRttMeanUs)}`],
    ['gRPC stream', 'pipelined msgs/s', Math.round(f.grpcStreamOpsPerSec)],
    ['gRPC stream, mutual TLS', 'round trip p50 / mean (µs)', `${us(f.grpcTlsRttUs)} / ${us(f.grpcTlsRttMeanUs)}`],
    ['gRPC stream, mutual TLS', 'pipelined msgs/s', Math.round(f.grpcTlsStreamOpsPerSec)],
    ['NATS in-CLI (CLI → nats-server → CLI)', 'request/reply round trip p50 / mean (µs)', `${us(f.natsRttUs)} / ${us(f.natsRttMeanUs)}`],
    ['NATS', 'pub/sub msgs/s', Math.round(f.natsPubSubMsgsPerSec)],
  ];
}

/** The demo's one line on the raw transport: median and mean of each round trip, the NATS path named. */
export function describeTransportRoundTrips(f: TransportFigures): string {
  return `raw transport on this machine, round trip p50 (mean): gRPC stream ${us(f.grpcRttUs)} µs (${us(f.grpcRttMeanUs)}), NATS in-CLI request/reply (CLI → nats-server → CLI) ${us(f.natsRttUs)} µs (${us(f.natsRttMeanUs)})`;
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
  else console.log(renderTable(['transport', 'figure', 'value'], transportRows(figures)));
  return 0;
}
