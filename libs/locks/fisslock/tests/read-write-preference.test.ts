import { describe, expect, it } from 'vitest';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { LockMode, LockPacket } from '@lockfabric/ports';
import { FLAG_HAS_AGENT } from '../src/wire.js';
import { loggedSim } from './support/packet-log.js';
import { runSeed } from './support/sweep.js';
import { expectEnd } from './support/wide-sweep.js';
import { FAULTS_2 } from './support/workload.js';

/** A switch ② GRANT: no agent and no `agent` (src) field, which only server-sent packets carry. */
const isSwitchSharedGrant = (p: LockPacket): boolean => p.type === 'grant' && (p.flags & FLAG_HAS_AGENT) === 0 && p.agent === undefined;

const HOLD_NS = 100_000;
const STREAM_NS = 3_000_000;
const WRITER_AT_NS = 500_000;

/**
 * Spec §4.6 / §11 property 10: four readers on three machines take lock 0 shared in overlapping
 * 100 µs holds for 3 ms, so the agent (at A, from the first reader's ①) always has a holder. At
 * 0.5 ms a writer on C asks for it exclusively.
 */
async function readerStream(protocolOptions: ProtocolOptions) {
  const sim = loggedSim({ policy: 'starvation-prevention', protocolOptions });
  const [a, b, c] = sim.nodes as [number, number, number];
  const clock = sim.cluster.clock;
  const t0 = clock.nowNs();
  const readers = [
    [a, 1, 0],
    [b, 1, 25_000],
    [c, 1, 50_000],
    [b, 2, 75_000],
  ] as const;
  const work = readers.map(async ([node, k, offsetNs]) => {
    const client = sim.client(node, k);
    await clock.sleep(offsetNs);
    while (clock.nowNs() < t0 + STREAM_NS) {
      const g = await client.acquire(0, 'shared', { timeoutMs: 20 });
      await clock.sleep(HOLD_NS);
      await client.release(g);
    }
  });
  const writer = { requestNs: 0, grantNs: 0 };
  const writing = (async () => {
    await clock.sleep(WRITER_AT_NS);
    const client = sim.client(c, 9);
    writer.requestNs = clock.nowNs();
    const g = await client.acquire(0, 'exclusive', { timeoutMs: 20 });
    writer.grantNs = clock.nowNs();
    await clock.sleep(HOLD_NS);
    await client.release(g);
  })();
  // just after the writer's request has reached the agent (and its STARVE the switch)
  await sim.step(WRITER_AT_NS + 20_000);
  const prefSoonAfterWriter = sim.decider.meta(0).pref;
  await sim.step(30_000_000);
  await Promise.all([...work, writing]);
  return { sim, t0, writer, prefSoonAfterWriter };
}

describe('fisslock starvation prevention (read-preferring with the starvation bit, spec §4.6)', () => {
  it('the agent sends STARVE for a writer queued behind readers; the decider grants no new ② until the writer has the lock, which comes within one hold time', async () => {
    const { sim, t0, writer, prefSoonAfterWriter } = await readerStream({});
    const log = sim.log.entries;
    const starve = log.find((e) => e.direction === 'out' && e.packet.type === 'notify');
    expect(starve?.machine).toBe(sim.nodes[0]); // sent by the agent's machine, A
    expect(prefSoonAfterWriter).toBe(true);
    // causal cut: an ACQUIRE sent after the STARVE's ACK came back reached the switch after the bit was set
    const starveAcked = log.find((e) => e.direction === 'in' && e.packet.type === 'ack' && e.packet.seq === starve?.packet.seq && e.machine === starve.machine);
    expect(starveAcked).toBeDefined();
    const blocked = log.filter((e) => e.direction === 'out' && e.packet.type === 'acquire' && e.packet.mode === 'shared' && e.atNs > starveAcked!.atNs && e.atNs < writer.grantNs);
    expect(blocked.length).toBeGreaterThan(0); // readers did ask while the writer waited
    const sharedGrants = log.filter((e) => e.direction === 'in' && isSwitchSharedGrant(e.packet));
    for (const request of blocked) {
      expect(sharedGrants.some((g) => g.packet.task === request.packet.task && g.machine === request.machine), `reader ${request.packet.task} got a ② grant while the writer waited`).toBe(false);
    }
    expect(sharedGrants.filter((g) => g.atNs > starveAcked!.atNs && g.atNs < writer.grantNs)).toEqual([]);
    // bounded wait: the readers holding when the bit was set drain within one hold time
    expect(writer.grantNs - writer.requestNs).toBeLessThan(HOLD_NS + 20_000);
    expect(writer.grantNs).toBeLessThan(t0 + STREAM_NS / 2);
  });

  it('mutant: an agent pool that never sends STARVE lets ② readers in for as long as they keep coming; the writer waits until the stream ends', async () => {
    const { sim, t0, writer, prefSoonAfterWriter } = await readerStream({ mutantNoStarve: true });
    expect(sim.log.entries.filter((e) => e.packet.type === 'notify')).toEqual([]);
    expect(prefSoonAfterWriter).toBe(false);
    const sharedWhileWaiting = sim.log.entries.filter((e) => e.direction === 'in' && isSwitchSharedGrant(e.packet) && e.atNs > writer.requestNs && e.atNs < writer.grantNs);
    expect(sharedWhileWaiting.length).toBeGreaterThan(20);
    expect(writer.grantNs).toBeGreaterThan(t0 + STREAM_NS);
  });
});

describe('fisslock write-preferring variant (ww bit, spec §4.6, §11 property 12)', () => {
  /** Requests in order, 10 µs apart, each holding 200 µs once granted; returns the grant order and the decider's ww after the last request. */
  async function scenario(requests: readonly (readonly [number, number, LockMode])[], protocolOptions: ProtocolOptions = {}) {
    const sim = loggedSim({ policy: 'write-preferring', protocolOptions });
    const clock = sim.cluster.clock;
    const grants: string[] = [];
    const waits: Promise<void>[] = [];
    for (const [machine, k, mode] of requests) {
      const name = `${String.fromCharCode(65 + machine)}/${k} ${mode === 'shared' ? 'S' : 'X'}`;
      const client = sim.client(sim.nodes[machine]!, k);
      waits.push(
        client.acquire(0, mode, { timeoutMs: 5 }).then(async (g) => {
          grants.push(name);
          await clock.sleep(200_000);
          await client.release(g);
        }),
      );
      await sim.step(10_000); // enough for the request to reach the switch and the agent, not for a hold to end
    }
    const wwAfterRequests = sim.decider.meta(0).pref;
    await sim.step(5_000_000);
    await Promise.all(waits);
    expect(sim.decider.meta(0)).toMatchObject({ free: true, mid: undefined, inca: 0, pref: false });
    return { sim, grants, wwAfterRequests };
  }

  it('a writer forwarded by the switch sets ww: remote (③) and local (④→⑤) readers arriving after it are granted after it', async () => {
    const { sim, grants, wwAfterRequests } = await scenario([
      [0, 0, 'shared'], // ①: agent at A
      [1, 1, 'shared'], // ②
      [2, 2, 'exclusive'], // ③, sets ww
      [1, 3, 'shared'], // would be ② without ww
      [0, 4, 'shared'], // would be ④ at A's agent
    ]);
    expect(wwAfterRequests).toBe(true);
    expect(grants).toEqual(['A/0 S', 'B/1 S', 'C/2 X', 'B/3 S', 'A/4 S']);
    expect(sim.sw.counters().decisions['grant-shared']).toBe(1); // B/1 only
  });

  it('a writer queued locally (⑤) tells the switch (ww notice), so a reader arriving after it is not granted ② ahead of it (spec §13.7, fixed)', async () => {
    const { sim, grants, wwAfterRequests } = await scenario([
      [0, 0, 'shared'], // ①: agent at A
      [0, 1, 'exclusive'], // ⑤ at A: no ACQUIRE reaches the switch
      [1, 2, 'shared'],
    ]);
    expect(wwAfterRequests).toBe(true);
    expect(sim.log.lines(0, (e) => e.packet.type === 'notify')).toEqual(['A→sw starve']);
    expect(grants).toEqual(['A/0 S', 'A/1 X', 'B/2 S']);
    expect(sim.sw.counters().decisions['grant-shared']).toBeUndefined();
  });

  it('mutant without the notice (the behaviour before the fix): the switch never learns of the ⑤ writer and grants the later reader ② first', async () => {
    const { grants, wwAfterRequests } = await scenario(
      [
        [0, 0, 'shared'],
        [0, 1, 'exclusive'],
        [1, 2, 'shared'],
      ],
      { mutantNoStarve: true },
    );
    expect(wwAfterRequests).toBe(false);
    expect(grants).toEqual(['A/0 S', 'B/2 S', 'A/1 X']);
  });

  it('under contention (3 nodes × 2 clients, 3 locks): exclusion, every acquire granted, one agent per lock, Lemma 1, consistent end state (every lock free without faults) — without faults and at 2%', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      for (const faults of [undefined, FAULTS_2]) {
        const r = await runSeed(seed, { policy: 'write-preferring', ops: 8, ...(faults ? { faults } : {}) });
        const at = `seed ${seed}${faults ? ' FAULTS_2' : ''}`;
        expect(r.violations, at).toEqual([]);
        expect(r.stalled, at).toBeUndefined();
        expect(r.untyped + r.unfinished, at).toBe(0);
        if (!faults) expect(r.failed, at).toBe(0);
        expect(r.agentsPerLockMax, at).toBeLessThanOrEqual(1);
        expect(r.modeMismatch, at).toBe(0);
        expectEnd(at, r.endState, !faults);
      }
    }
  }, 60_000);
});
