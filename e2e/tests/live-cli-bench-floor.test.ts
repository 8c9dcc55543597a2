import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// A live bench sets each protocol's uncontended latency against the bare transport
// measured in the same run. The figures are recorded (printed and written under test-output/),
// never asserted on: only their shape and the exact round trips each fast path needs are.

interface PhaseJson {
  readonly p50Us: number;
  readonly meanUs: number;
  readonly roundTrips: number;
  readonly floorUs: number;
  readonly ratioP50: number;
  readonly ratioMean: number;
}
interface FloorJson {
  readonly transport: 'grpc' | 'nats';
  readonly rttUs: number;
  readonly grpcRttUs: number;
  readonly natsRttUs: number;
  readonly operations: number;
  readonly acquire: PhaseJson;
  readonly release?: PhaseJson;
}

describe('lockfabric bench --substrate live: the transport floor', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ switchProgram: 'fisslock' });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('caslock (one CAS, one WRITE) over gRPC and fisslock (one exchange) over NATS, with ratios to the floor', async () => {
    const { code, stdout, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--protocol', 'caslock,fisslock', '--clients', '4', '--operations', '300', '--floor-ops', '150', '--json']);
    expect(code, stderr).toBe(0);
    const { results } = JSON.parse(stdout) as { results: { protocol: string; floor?: FloorJson }[] };
    const floors = new Map(results.map((r) => [r.protocol, r.floor]));
    const cas = floors.get('caslock');
    expect(cas).toMatchObject({ transport: 'grpc', operations: 150, acquire: { roundTrips: 1 }, release: { roundTrips: 1 } });
    const fiss = floors.get('fisslock');
    expect(fiss).toMatchObject({ transport: 'nats', operations: 150, acquire: { roundTrips: 1 } });
    expect(fiss?.release).toBeUndefined();
    for (const floor of [cas, fiss] as FloorJson[]) {
      expect(floor.rttUs).toBeGreaterThan(0);
      expect(floor.acquire.floorUs).toBeCloseTo(floor.acquire.roundTrips * floor.rttUs, 6);
      expect(floor.acquire.ratioP50).toBeGreaterThan(0);
    }
    const dir = join(import.meta.dirname, '..', 'test-output');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'live-floor.json'), JSON.stringify(Object.fromEntries(floors), null, 2));
    console.log(`live floor figures: ${JSON.stringify(Object.fromEntries([...floors].map(([p, f]) => [p, { rttUs: f?.rttUs, acquire: f?.acquire.ratioP50, release: f?.release?.ratioP50 }])))}`);
  }, 180_000);

  it('--floor-ops on sim is a configuration error (exit 2)', async () => {
    const { code, stderr } = await runCli(['bench', '--floor-ops', '10']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--floor-ops: the transport floor is a live figure/);
  });
});
