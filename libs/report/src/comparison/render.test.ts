import { describe, expect, it } from 'vitest';
import { sampleDemo } from '../../tests/support/sample-comparison.js';
import { renderComparisonReport } from './render.js';

describe('demo report header', () => {
  it('gives the raw round trips as median and mean, the NATS one named in-CLI; a report without means still renders', async () => {
    const withMeans = await renderComparisonReport(sampleDemo({ transport: { grpcRttUs: 40, grpcRttMeanUs: 55.5, natsRttUs: 120, natsRttMeanUs: 150.5 } }));
    expect(withMeans.html).toContain('round trip p50: gRPC stream 40.0 µs (mean 55.5), NATS in-CLI request/reply 120.0 µs (mean 150.5)');
    const older = await renderComparisonReport(sampleDemo({ transport: { grpcRttUs: 40, natsRttUs: 120 } }));
    expect(older.html).toContain('round trip p50: gRPC stream 40.0 µs, NATS in-CLI request/reply 120.0 µs');
  });
});
