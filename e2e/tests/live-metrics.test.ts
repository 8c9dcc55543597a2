import { Client } from '@grpc/grpc-js';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { clientCredentials, connectNats, createSubjects, rawMethodOf, silentLogger } from '@lockfabric/live';
import { PrometheusFormatError, parsePrometheusText, sumSamples } from '@lockfabric/telemetry';
import type { PrometheusFamily } from '@lockfabric/telemetry';
import { MemoryService } from '@lockfabric/wire';
import { runLive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';

// Every service's /metrics, scraped before, during and after live runs of a verb protocol (caslock)
// and a switch protocol (srvlock through switch-dataplane), plus injected garbage and a paused
// member: each scrape must be valid Prometheus text, and the counters and histograms must move.

type Scrape = Map<string, PrometheusFamily>;

async function scrape(process: ProcessRecord): Promise<Scrape> {
  const response = await fetch(`http://127.0.0.1:${process.health}/metrics`);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  // parsePrometheusText throws on anything a Prometheus scraper would reject.
  return parsePrometheusText(await response.text());
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `moved` holds; the deadline only bounds a failing test, it never decides a passing one. */
async function eventually(process: ProcessRecord, moved: (s: Scrape) => boolean, what: string, deadlineMs = 60_000): Promise<Scrape> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const s = await scrape(process);
    if (moved(s)) return s;
    if (Date.now() > until) throw new Error(`${process.name}: ${what} did not move within ${deadlineMs} ms`);
    await sleep(100);
  }
}

/** Sends one undecodable frame on a raw verbs stream of a memory node and waits for its answer. */
async function garbageToMemory(address: string): Promise<void> {
  const connect = rawMethodOf(MemoryService.method.connect);
  const client = new Client(address, clientCredentials());
  const call = client.makeBidiStreamRequest(connect.path, connect.requestSerialize, connect.responseDeserialize) as ClientDuplexStream<Uint8Array, Uint8Array>;
  try {
    const answered = new Promise<void>((resolve) => call.once('data', () => resolve()));
    call.on('error', () => undefined);
    call.write(Uint8Array.from([0xff, 0xff, 0xff, 0x0f, 0x08, 0x99, 0x12]));
    await answered;
  } finally {
    call.end();
    client.close();
  }
}

describe('live metrics: every service serves valid Prometheus text whose series move', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  const byRole = (role: ProcessRecord['role']) => cluster.state.processes.filter((p) => p.role === role);
  const services = () => cluster.state.processes.filter((p) => p.role !== 'nats');
  const before = new Map<string, Scrape>();

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: true, switchProgram: 'forward', withCoordinator: true });
    for (const p of services()) before.set(p.name, await scrape(p));
  });
  afterAll(async () => {
    for (const p of cluster?.state.processes ?? []) {
      try {
        process.kill(p.pid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
    await cluster?.stop();
  });

  it('every service has a health port and its scrape parses before any run', () => {
    expect(services().map((p) => p.role).sort()).toEqual(['compute', 'compute', 'coordinator', 'memory', 'switch']);
    for (const p of services()) expect(before.get(p.name)?.size, p.name).toBeGreaterThan(0);
  });

  it('the format check rejects a live scrape with one sample broken', async () => {
    const text = await (await fetch(`http://127.0.0.1:${byRole('memory')[0]!.health}/metrics`)).text();
    const broken = text.replace(/^([a-z_]+(?:\{[^}]*\})?) (\S+)$/m, '$1 not-a-number');
    expect(broken).not.toBe(text);
    expect(() => parsePrometheusText(broken)).toThrow(PrometheusFormatError);
  });

  it('a caslock run moves grant and wait histograms, verbs by opcode and per acquire, and NIC verbs', async () => {
    const run = runLive({
      state: cluster.state,
      protocol: 'caslock',
      spec: { clients: 8, locks: 4, readRatio: 0, distribution: 'uniform', operations: 400, thinkNs: 0, criticalSectionNs: 20_000, seed: 5, timeoutMs: 10_000 },
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    // A scrape while the run is going must be valid too (series appear and grow under load).
    const during = await Promise.all(services().map(scrape));
    expect(during).toHaveLength(services().length);
    const result = await run;
    expect(result.summary.acquires).toBeGreaterThan(0);

    for (const compute of byRole('compute')) {
      const was = before.get(compute.name)!;
      const now = await scrape(compute);
      expect(now.get('lockfabric_lock_grant_seconds')?.type).toBe('histogram');
      expect(now.get('lockfabric_lock_wait_seconds')?.type).toBe('histogram');
      expect(sumSamples(now, 'lockfabric_lock_grant_seconds_count', { protocol: 'caslock', mode: 'exclusive' })).toBeGreaterThan(sumSamples(was, 'lockfabric_lock_grant_seconds_count', { protocol: 'caslock' }));
      expect(sumSamples(now, 'lockfabric_lock_grant_seconds_sum', { protocol: 'caslock' })).toBeGreaterThan(0);
      expect(sumSamples(now, 'lockfabric_lock_wait_seconds_count', { protocol: 'caslock', outcome: 'granted' })).toBeGreaterThan(0);
      expect(sumSamples(now, 'lockfabric_verbs_per_acquire_count', { protocol: 'caslock' })).toBeGreaterThan(0);
      expect(sumSamples(now, 'lockfabric_lock_operations_total', { protocol: 'caslock', operation: 'release' })).toBeGreaterThan(0);
      // caslock acquires with CAS and releases with a write or CAS: the cas opcode must move.
      expect(sumSamples(now, 'lockfabric_compute_verbs_total', { opcode: 'cas' })).toBeGreaterThan(sumSamples(was, 'lockfabric_compute_verbs_total', { opcode: 'cas' }));
    }
    const memory = byRole('memory')[0]!;
    const nic = await scrape(memory);
    expect(nic.get('lockfabric_nic_verbs_total')?.type).toBe('counter');
    expect(sumSamples(nic, 'lockfabric_nic_verbs_total', { opcode: 'cas' })).toBeGreaterThan(sumSamples(before.get(memory.name)!, 'lockfabric_nic_verbs_total', { opcode: 'cas' }));
    // Every doorbell carries at least one verb: verbs per doorbell (batching) is at least 1.
    const doorbells = sumSamples(nic, 'lockfabric_nic_doorbells_total') - sumSamples(before.get(memory.name)!, 'lockfabric_nic_doorbells_total');
    const verbs = sumSamples(nic, 'lockfabric_nic_verbs_total') - sumSamples(before.get(memory.name)!, 'lockfabric_nic_verbs_total');
    expect(nic.get('lockfabric_nic_doorbells_total')?.type).toBe('counter');
    expect(doorbells).toBeGreaterThan(0);
    expect(doorbells).toBeLessThanOrEqual(verbs);
  });

  it('a srvlock run through switch-dataplane moves switch packets by type and decisions', async () => {
    const sw = byRole('switch')[0]!;
    const was = await scrape(sw);
    const result = await runLive({
      state: cluster.state,
      protocol: 'srvlock',
      spec: { clients: 4, locks: 4, readRatio: 0.25, distribution: 'uniform', operations: 200, thinkNs: 0, criticalSectionNs: 10_000, seed: 9, timeoutMs: 10_000 },
      protocolOptions: { retransmitNs: '20000000', maxAttempts: '400' },
    });
    expect(result.summary.acquires).toBeGreaterThan(0);
    const now = await scrape(sw);
    expect(now.get('lockfabric_switch_packets_total')?.type).toBe('counter');
    expect(sumSamples(now, 'lockfabric_switch_packets_total')).toBeGreaterThan(sumSamples(was, 'lockfabric_switch_packets_total'));
    expect(now.get('lockfabric_switch_packets_total')!.samples.map((s) => s.labels['type']).filter(Boolean).length).toBeGreaterThan(0);
    expect(sumSamples(now, 'lockfabric_switch_decisions_total')).toBeGreaterThan(sumSamples(was, 'lockfabric_switch_decisions_total'));
    for (const compute of byRole('compute')) {
      expect(sumSamples(await scrape(compute), 'lockfabric_lock_grant_seconds_count', { protocol: 'srvlock' }), compute.name).toBeGreaterThan(0);
    }
  });

  it('garbage on the switch, coordinator, compute-node and memory-node inputs moves their decode error counters', async () => {
    const [sw, coordinator, memory, compute] = [byRole('switch')[0]!, byRole('coordinator')[0]!, byRole('memory')[0]!, byRole('compute')[0]!];
    const was = new Map(await Promise.all([sw, coordinator, memory, compute].map(async (p) => [p.name, sumSamples(await scrape(p), 'lockfabric_decode_errors_total')] as const)));
    const nc = await connectNats({ servers: cluster.state.natsUrl, name: 'live-metrics-test', logger: silentLogger });
    try {
      const subjects = createSubjects(cluster.state.cluster);
      const garbage = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
      nc.publish(subjects.switchIn(0), garbage);
      nc.publish(subjects.heartbeat('compute', '77'), garbage);
      nc.publish(subjects.nodeMessages(compute.node, 0), garbage);
      await nc.flush();
    } finally {
      await nc.drain();
    }
    await garbageToMemory(`127.0.0.1:${memory.grpc}`);
    for (const p of [sw, coordinator, memory, compute]) {
      await eventually(p, (s) => sumSamples(s, 'lockfabric_decode_errors_total') > was.get(p.name)!, 'lockfabric_decode_errors_total');
    }
  });

  it('a paused compute node moves the coordinator member transitions and state gauge', async () => {
    const coordinator = byRole('coordinator')[0]!;
    const paused = byRole('compute')[1]!;
    // Counted from before the runs: on a loaded machine a member may already have been suspected
    // (and, once dead, stays fenced, so pausing it again moves nothing); the pause makes sure.
    const was = sumSamples(before.get(coordinator.name)!, 'lockfabric_coordinator_member_transitions_total');
    process.kill(paused.pid, 'SIGSTOP');
    let during: Scrape;
    try {
      // Paused until the coordinator has noticed the silence, however long a loaded machine takes.
      during = await eventually(coordinator, (s) => sumSamples(s, 'lockfabric_coordinator_member_transitions_total') > was, 'member transitions');
    } finally {
      process.kill(paused.pid, 'SIGCONT');
    }
    expect(sumSamples(during, 'lockfabric_coordinator_member_transitions_total', { to: 'suspect' })).toBeGreaterThan(0);
    expect(during.get('lockfabric_coordinator_members')?.type).toBe('gauge');
    expect(sumSamples(during, 'lockfabric_coordinator_members')).toBeGreaterThanOrEqual(4);
  });
});
