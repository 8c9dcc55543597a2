import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// `lockfabric transport` against a real nats-server it starts itself and real gRPC echo servers:
// every round trip comes as median and mean (the table's wording: commands/transport.test.ts).
describe('lockfabric transport', () => {
  it('measures each round trip as median and mean', async () => {
    const r = await runCli(['transport', '--messages', '100', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const figures = JSON.parse(r.stdout) as Record<string, number>;
    for (const key of ['grpcRttUs', 'grpcRttMeanUs', 'grpcTlsRttUs', 'grpcTlsRttMeanUs', 'natsRttUs', 'natsRttMeanUs', 'natsPubSubMsgsPerSec']) expect(figures[key], key).toBeGreaterThan(0);
  });
});
