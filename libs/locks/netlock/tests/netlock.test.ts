import type { ServerLockClient } from '@lockfabric/lock-srvlock';
import { allocateSwitchQueues, netlock, netlockProgram, profileLockTrace } from '../src/index.js';
import type { NetLockProgramOptions, QueueAllocation } from '../src/index.js';
import { describe, expect, it } from 'vitest';
import { createSwitchNet, runWorkload } from '@lockfabric/harness';

const NODES = [1, 2, 3];

describe('netlock allocation (knapsack over a profiled trace)', () => {
  it('profiles requests and distinct requesters per lock', () => {
    const trace = [
      { lock: 1, requester: 'a' },
      { lock: 1, requester: 'b' },
      { lock: 1, requester: 'a' },
      { lock: 2, requester: 'c' },
    ];
    expect(profileLockTrace(trace)).toEqual([
      { lock: 1, requests: 3, demand: 2 },
      { lock: 2, requests: 1, demand: 1 },
    ]);
  });

  it('exact knapsack beats the greedy-by-density choice; the greedy fallback is used past the limit', () => {
    const profiles = [
      { lock: 1, requests: 10, demand: 5 },
      { lock: 2, requests: 7, demand: 4 },
      { lock: 3, requests: 7, demand: 4 },
    ];
    expect(allocateSwitchQueues(profiles, 8)).toEqual([
      { lock: 2, base: 0, size: 4 },
      { lock: 3, base: 4, size: 4 },
    ]);
    expect(allocateSwitchQueues(profiles, 8, 255, 1)).toEqual([{ lock: 1, base: 0, size: 5 }]);
  });
});

function start(seed: number, program: NetLockProgramOptions) {
  const net = createSwitchNet({ seed, computeNodes: NODES, program: netlockProgram(program) });
  net.startServices(netlock);
  return net;
}

describe('netlock scripted exchanges', () => {
  it('uncontended hot lock: 1 packet out + 1 in per acquire, 1 out per release (+ the switch ACK, consumed by the resend guard), never reaching the server', async () => {
    const net = start(1, { slotBudget: 64, allocation: [{ lock: 4, base: 0, size: 4 }] });
    const client = netlock.createClient(net.clientPorts({ node: 3, client: 0 })) as ServerLockClient;
    const run = (async () => {
      const snaps = [{ ...client.traffic }];
      const g = await client.acquire(4, 'exclusive');
      snaps.push({ ...client.traffic });
      await client.release(g);
      await net.clock.sleep(10_000);
      snaps.push({ ...client.traffic });
      const c = await client.acquire(5, 'exclusive'); // cold: the lock server
      snaps.push({ ...client.traffic });
      await client.release(c);
      snaps.push({ ...client.traffic });
      return snaps.map((s) => [s.packetsSent, s.packetsReceived]);
    })();
    await net.scheduler.run();
    expect(await run).toEqual([
      [0, 0],
      [1, 1],
      [2, 1],
      [3, 2],
      [4, 3],
    ]);
    expect(net.sent.filter((s) => s.packet.lock === 4).map((s) => `${s.from}:${s.packet.type}`)).toEqual(['3:acquire', '3:release']);
    expect(net.delivered.filter((s) => s.packet.lock === 4).map((s) => `${s.from}:${s.packet.type}`)).toEqual(['3:grant', '3:ack']);
    expect(net.sw.counters().decisions).toMatchObject({ 'grant-switch': 1, released: 1 });
    await net.stopServices();
  });

  it('a writer release hands over to the queued reader run: grant, NOTIFY recirculation, grant', async () => {
    const program = netlockProgram({ slotBudget: 16, allocation: [{ lock: 2, base: 0, size: 8 }] });
    const net = createSwitchNet({ seed: 2, computeNodes: NODES, program });
    net.startServices(netlock);
    const w = netlock.createClient(net.clientPorts({ node: 1, client: 0 }));
    const r1 = netlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    const r2 = netlock.createClient(net.clientPorts({ node: 3, client: 0 }));
    const w2 = netlock.createClient(net.clientPorts({ node: 3, client: 1 }));
    const events: string[] = [];
    const run = (async () => {
      const gw = await w.acquire(2, 'exclusive');
      const p1 = r1.acquire(2, 'shared').then((g) => (events.push('r1'), g));
      await net.clock.sleep(5_000);
      const p2 = r2.acquire(2, 'shared').then((g) => (events.push('r2'), g));
      await net.clock.sleep(5_000);
      const p3 = w2.acquire(2, 'exclusive').then((g) => (events.push('w2'), g));
      await net.clock.sleep(5_000);
      expect(program.queueState(2)).toEqual({ head: 0, count: 4, granted: 1, released: 0, tailExclusive: true });
      events.push('w-release');
      await w.release(gw);
      const [g1, g2] = await Promise.all([p1, p2]);
      await net.clock.sleep(5_000);
      expect(program.queueState(2)).toMatchObject({ count: 3, granted: 2, released: 0, tailExclusive: true });
      events.push('readers-release');
      await r1.release(g1);
      await r2.release(g2);
      await w2.release(await p3);
    })();
    await net.scheduler.run();
    await run;
    expect(events).toEqual(['w-release', 'r1', 'r2', 'readers-release', 'w2']);
    expect(net.sw.counters().decisions).toMatchObject({ 'grant-handover': 2, 'grant-notify': 1 });
    expect(program.queueState(2)).toEqual({ head: 4, count: 0, granted: 0, released: 0, tailExclusive: false });
    await net.stopServices();
  });

  it('a full switch queue pushes back; the client retries and is granted after the release', async () => {
    const net = start(3, { slotBudget: 4, allocation: [{ lock: 1, base: 0, size: 1 }] });
    const a = netlock.createClient(net.clientPorts({ node: 1, client: 0 }));
    const b = netlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    const run = (async () => {
      const ga = await a.acquire(1, 'exclusive');
      const pb = b.acquire(1, 'exclusive');
      await net.clock.sleep(50_000);
      await a.release(ga);
      await b.release(await pb);
    })();
    await net.scheduler.run();
    await run;
    expect(net.sw.counters().decisions['push-back']).toBeGreaterThan(0);
    await net.stopServices();
  });

  it('a timed-out switch-queued request releases its late grant, so the lock stays usable', async () => {
    const program = netlockProgram({ slotBudget: 8, allocation: [{ lock: 1, base: 0, size: 4 }] });
    const net = createSwitchNet({ seed: 4, computeNodes: NODES, program });
    net.startServices(netlock);
    const a = netlock.createClient(net.clientPorts({ node: 1, client: 0 }));
    const b = netlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    const run = (async () => {
      const ga = await a.acquire(1, 'exclusive');
      const failure = await b.acquire(1, 'exclusive', { timeoutMs: 0.02 }).catch((e: unknown) => (e as Error).name);
      await a.release(ga);
      await net.clock.sleep(20_000);
      const again = await a.acquire(1, 'exclusive', { timeoutMs: 1 });
      await a.release(again);
      return failure;
    })();
    await net.scheduler.run();
    expect(await run).toBe('LockTimeoutError');
    expect(program.queueState(1)).toMatchObject({ count: 0, granted: 0 });
    await net.stopServices();
  });
});

const workload = { clientsPerNode: 3, opsPerClient: 12, locks: 6, sharedRatio: 0.6, maxHoldNs: 20_000, timeoutMs: 5 };
// Locks 0–2 hot with small queues (push-back happens), 3–5 on the lock server.
const allocation: QueueAllocation[] = [
  { lock: 0, base: 0, size: 3 },
  { lock: 1, base: 3, size: 9 },
  { lock: 2, base: 12, size: 5 },
];

describe('netlock seed sweep', () => {
  it('500 seeds: no exclusion violation, every acquire granted or timed out', async () => {
    let pushBacks = 0;
    for (let seed = 1; seed <= 500; seed++) {
      const net = createSwitchNet({ seed, computeNodes: NODES, program: netlockProgram({ slotBudget: 32, allocation }), jitterNs: 2_000 });
      const result = await runWorkload(net, netlock, NODES, workload);
      expect(result.violations, `seed ${seed}`).toBe(0);
      expect(result.otherErrors, `seed ${seed}`).toEqual([]);
      expect(result.granted + result.timeouts).toBe(NODES.length * workload.clientsPerNode * workload.opsPerClient);
      pushBacks += net.sw.counters().decisions['push-back'] ?? 0;
    }
    expect(pushBacks).toBeGreaterThan(0);
  }, 60_000);

  it('the notify-ignores-mode mutant is caught within 100 seeds', async () => {
    let caught = 0;
    for (let seed = 1; seed <= 100 && caught === 0; seed++) {
      const program = netlockProgram({ slotBudget: 32, allocation, mutantNotifyIgnoresMode: true });
      const net = createSwitchNet({ seed, computeNodes: NODES, program, jitterNs: 2_000 });
      caught += (await runWorkload(net, netlock, NODES, workload)).violations;
    }
    expect(caught).toBeGreaterThan(0);
  });
});
