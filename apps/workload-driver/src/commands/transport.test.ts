import { describe, expect, it } from 'vitest';
import { describeTransportRoundTrips, transportRows } from './transport.js';
import type { TransportFigures } from './transport.js';

const figures: TransportFigures = {
  grpcRttUs: 40,
  grpcRttMeanUs: 55.5,
  grpcStreamOpsPerSec: 90_000,
  grpcTlsRttUs: 48,
  grpcTlsRttMeanUs: 61,
  grpcTlsStreamOpsPerSec: 70_000,
  natsRttUs: 120,
  natsRttMeanUs: 150.25,
  natsPubSubMsgsPerSec: 400_000,
};

describe('transport figures as printed', () => {
  it('gives each round trip as median and mean, the NATS one named in-CLI with its path', () => {
    const rows = transportRows(figures).map((r) => r.join(' | '));
    expect(rows).toContain('gRPC stream | round trip p50 / mean (µs) | 40.0 / 55.5');
    expect(rows).toContain('gRPC stream, mutual TLS | round trip p50 / mean (µs) | 48.0 / 61.0');
    expect(rows).toContain('NATS in-CLI (CLI → nats-server → CLI) | request/reply round trip p50 / mean (µs) | 120.0 / 150.3');
  });

  it("prints the demo's transport line with both figures of both round trips", () => {
    expect(describeTransportRoundTrips(figures)).toBe('raw transport on this machine, round trip p50 (mean): gRPC stream 40.0 µs (55.5), NATS in-CLI request/reply (CLI → nats-server → CLI) 120.0 µs (150.3)');
  });
});
