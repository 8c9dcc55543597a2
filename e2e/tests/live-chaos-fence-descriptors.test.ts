import { fromBinary } from '@bufbuild/protobuf';
import { announceLockTable } from '@lockfabric/coordinator/service';
import { MemoryQueuePair, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import type { RemoteAddr } from '@lockfabric/ports';
import { MemberState, MembershipViewSchema } from '@lockfabric/wire';
import type { MembershipView } from '@lockfabric/wire';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, metric, sleep, waitFor } from './live-chaos-support.js';

// Compute nodes serve their clients' MCS queue nodes (descriptor slots) to peers, which WRITE
// grants and links into them. A node paused (SIGSTOP) past failure detection and declared dead must
// not reach a survivor's queue nodes when it resumes: the survivor's memory server fences it as the
// memory node does (bad-rkey, "fenced: …") until it rejoins with a new incarnation. The late verbs
// are sent by a queue pair that claims compute-2's node id, as every verb of the resumed process
// does: what it would write depends on where its clients were paused, the refusal does not.
const MISSES = 10;
const DETECTION_MS = 100 * MISSES;
const LOCKS = 2;
/** Initiator id of a bystander queue pair (no compute node has it): never fenced. */
const PROBE = 64_997;

describe("live chaos: a paused mcs node declared dead cannot write into a survivor's queue nodes", () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  const views: MembershipView[] = [];

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 2, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-fence-descriptors', logger: silentLogger });
    nc.subscribe(createSubjects(cluster.state.cluster).membership(), { callback: (error, msg) => void (error || views.push(fromBinary(MembershipViewSchema, msg.data))) });
    await nc.flush();
  });
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it("mcs: compute-2's late WRITE into compute-1's queue node is refused after the fence and served again after its rejoin", async () => {
    const chaos = new LocalChaos(cluster.dir);
    const compute1 = chaos.process('compute-1');
    const compute2 = chaos.process('compute-2');
    const node2 = (v: MembershipView) => v.members.find((m) => m.role === 'compute' && m.node === compute2.node);
    await waitFor(() => views.some((v) => node2(v)?.state === MemberState.ALIVE), 10_000, 'a view listing compute-2 alive');
    const incarnationBefore = node2(views.at(-1)!)?.incarnation ?? 0n;

    await announceLockTable(nc, createSubjects(cluster.state.cluster), 'mcs', LOCKS);
    const run = runLive({
      state: cluster.state,
      protocol: 'mcs',
      protocolOptions: { releaseLinkTimeoutNs: String(200 * MS) },
      spec: { clients: 8, locks: LOCKS, readRatio: 0, distribution: 'uniform', durationMs: 4_000, thinkNs: 1 * MS, criticalSectionNs: 20 * MS, seed: 5, timeoutMs: 1_500 },
      tolerateNodeFailures: true,
    }).catch((error: unknown) => error);

    const address = `127.0.0.1:${compute1.memoryGrpc}`;
    const asCompute2 = await MemoryQueuePair.connect(address, compute2.node, { logger: silentLogger });
    const bystander = await MemoryQueuePair.connect(address, PROBE, { logger: silentLogger });
    try {
      const region = (await bystander.describe()).regions[0]!;
      // Queue node of compute-1's client 0 (in use by the mcs run).
      const slot: RemoteAddr = { node: compute1.node, region: region.region, rkey: region.rkey, offset: 0 };
      const read = { op: 'read' as const, addr: slot, length: 8 };
      expect((await asCompute2.post([read]))[0]?.status, 'compute-2 is served while alive').toBe('ok');

      await sleep(800);
      await chaos.pause('compute-2');
      await waitFor(() => views.some((v) => node2(v)?.state === MemberState.DEAD && node2(v)?.incarnation === incarnationBefore), DETECTION_MS + 10_000, 'a view declaring compute-2 dead');
      // compute-1 applies the same view: from then on every verb claiming compute-2 is refused.
      await waitFor(async () => (await asCompute2.post([read]))[0]?.status === 'bad-rkey', 5_000, 'compute-1 fences compute-2');
      const current = (await bystander.post([read]))[0];
      expect(current?.status, 'a bystander is still served').toBe('ok');
      const late = await asCompute2.post([{ op: 'write', addr: slot, data: current!.data! }]);
      expect(late[0]?.status).toBe('bad-rkey');
      expect(late[0]?.detail).toMatch(new RegExp(`^fenced: compute node ${compute2.node} \\(incarnation ${incarnationBefore}\\) was declared dead`));
      const fencedWhilePaused = await metric(compute1, 'lockfabric_compute_fenced_requests_total');
      expect(fencedWhilePaused).toBeGreaterThanOrEqual(2);

      // Resumed, compute-2 retires the old incarnation and rejoins with a new one, which is served again.
      await chaos.resume('compute-2');
      await waitFor(async () => (await metric(compute2, 'lockfabric_compute_rejoins_total')) >= 1, 15_000, 'compute-2 to rejoin');
      await waitFor(() => views.some((v) => node2(v)?.state === MemberState.ALIVE && node2(v)!.incarnation > incarnationBefore), 10_000, 'a view admitting the new incarnation of compute-2');
      await waitFor(async () => (await asCompute2.post([read]))[0]?.status === 'ok', 5_000, 'compute-1 serves the new incarnation of compute-2');
      await run;
      const fencedTotal = await metric(compute1, 'lockfabric_compute_fenced_requests_total');
      console.log(`compute-1 refused ${fencedTotal} work requests of the fenced compute-2 (${fencedWhilePaused} while it was paused, from this test's queue pair)`);
    } finally {
      await chaos.resume('compute-2').catch(() => undefined);
      asCompute2.close();
      bystander.close();
    }
  });
});
