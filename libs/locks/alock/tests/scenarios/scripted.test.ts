import { lockAddress } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { LOCAL, REMOTE, tailAddr, victimAddr } from '../../src/index.js';
import type { AlockClient, AlockEvent } from '../../src/index.js';
import { checkAlockEvents } from '../support/invariants.js';
import { scriptedSim } from '../support/scripted.js';
import type { ScriptedSim } from '../support/scripted.js';
import { verbDelta, verbTable } from '../support/verb-tally.js';

const LOCK = 1;

/** Acquire at `startNs`, hold for `holdNs`, release; returns the grant's entry kind. */
function holdAt(sim: ScriptedSim, client: AlockClient, startNs: number, holdNs: number) {
  return sim.at(startNs, async () => {
    const grant = await client.acquire(LOCK, 'exclusive');
    await sim.cluster.clock.sleep(holdNs);
    await client.release(grant);
    return grant.entryKind;
  });
}

function entries(events: readonly AlockEvent[]) {
  return events.filter((e) => e.type === 'enter').map((e) => ({ ref: e.ref, cls: e.cls, kind: e.kind, budget: e.budget }));
}

function lockWords(sim: ScriptedSim) {
  const entry = lockAddress(sim.cluster.layout, LOCK);
  const memory = sim.cluster.node(sim.home).memory;
  return { tailLocal: memory.cpuLoad(tailAddr(entry, LOCAL)), tailRemote: memory.cpuLoad(tailAddr(entry, REMOTE)), victim: memory.cpuLoad(victimAddr(entry)) };
}

describe('alock scripted scenarios (spec §3.7)', () => {
  it('S1: both classes arrive at an idle lock; the class that wrote victim last waits, and enters when the other queue empties', async () => {
    const sim = scriptedSim();
    const local = sim.client({ node: sim.home, client: 0 });
    const remote = sim.client({ node: sim.computeNodes[0]!, client: 1 });
    // R swaps into T_R at ~2.2 µs and writes victim at ~4.2 µs; L swaps into T_L and writes victim in between.
    const kinds = await sim.run([holdAt(sim, remote, 0, 5_000), holdAt(sim, local, 2_500, 10_000)]);
    expect(kinds).toEqual(['leader', 'leader']);
    const victims = sim.events.filter((e) => e.type === 'victim').map((e) => e.cls);
    expect(victims).toEqual(['local', 'remote']); // R's write is the last one
    expect(entries(sim.events).map((e) => e.cls)).toEqual(['local', 'remote']);
    // R waited: it saw T_L set and victim = R, and entered only after L's release cleared T_L.
    const lExit = sim.events.findIndex((e) => e.type === 'emptied' && e.cls === 'local');
    const rEnter = sim.events.findIndex((e) => e.type === 'enter' && e.cls === 'remote');
    expect(lExit).toBeGreaterThanOrEqual(0);
    expect(rEnter).toBeGreaterThan(lExit);
    expect(lockWords(sim)).toEqual({ tailLocal: 0n, tailRemote: 0n, victim: BigInt(REMOTE) });
    expect(checkAlockEvents(sim.events, { localBudget: 5, remoteBudget: 5 }).violations).toEqual([]);
  });

  it('S2: budget rotation with B = 2 — CS order L1, L2, R1, L3', async () => {
    const sim = scriptedSim();
    const options = { localBudget: 2 };
    const [l1, l2, l3] = [0, 1, 2].map((client) => sim.client({ node: sim.home, client }, options));
    const r1 = sim.client({ node: sim.computeNodes[0]!, client: 3 }, options);
    const kinds = await sim.run([
      holdAt(sim, l1!, 0, 30_000), // L1: leader, in the CS
      holdAt(sim, r1, 1_000, 5_000), // R1: remote head, waits with victim = R
      holdAt(sim, l2!, 10_000, 5_000), // L2 and L3 queue behind L1
      holdAt(sim, l3!, 11_000, 5_000),
    ]);
    expect(kinds).toEqual(['leader', 'leader', 'passed', 'reacquired']);
    const order = entries(sim.events);
    const name = new Map([
      [order.find((e) => e.cls === 'remote')!.ref, 'R1'],
      ...order.filter((e) => e.cls === 'local').map((e, i) => [e.ref, `L${i + 1}`] as const),
    ]);
    expect(order.map((e) => `${name.get(e.ref)}:${e.kind}:${e.budget}`)).toEqual(['L1:leader:2', 'L2:passed:1', 'R1:leader:5', 'L3:reacquired:2']);
    // L3's re-arbitration wrote victim = L, which let R1 (waiting since before) in.
    const victims = sim.events.filter((e) => e.type === 'victim').map((e) => e.cls);
    expect(victims).toEqual(['local', 'remote', 'local']);
    expect(checkAlockEvents(sim.events, { localBudget: 2, remoteBudget: 5 }).violations).toEqual([]);
  });

  it('S3: release race — the holder’s tail CAS fails because a successor swapped in; it waits for the link and hands over', async () => {
    const sim = scriptedSim();
    const [nodeA, nodeB] = [sim.computeNodes[0]!, sim.computeNodes[1]!];
    const h1 = sim.client({ node: nodeA, client: 0 });
    const h2 = sim.client({ node: nodeB, client: 1 });
    let releaseVerbs = {};
    const holder = sim.at(0, async () => {
      const grant = await h1.acquire(LOCK, 'exclusive');
      await sim.cluster.clock.sleep(23_000 - sim.cluster.clock.nowNs());
      const before = verbTable(sim.cluster, nodeA);
      await h1.release(grant); // reads next = null, then its CAS T_R: H1 → null lands after H2's swap
      releaseVerbs = verbDelta(before, verbTable(sim.cluster, nodeA));
      return grant.entryKind;
    });
    const kinds = await sim.run([holder, holdAt(sim, h2, 20_000, 1_000)]);
    expect(kinds).toEqual(['leader', 'passed']);
    const steps = sim.events.map((e) => `${e.ref === sim.events[0]!.ref ? 'H1' : 'H2'}:${e.type}`);
    // H1 starts releasing (reads next = null), H2's swap lands before H1's CAS: no 'emptied' for H1.
    expect(steps).toEqual(['H1:swap', 'H1:victim', 'H1:enter', 'H1:exit', 'H2:swap', 'H2:link', 'H1:handoff', 'H2:enter', 'H2:exit', 'H2:emptied']);
    // The failed CAS on the home node, then the hand-over WRITE into H2's descriptor on its own node.
    expect(releaseVerbs).toEqual({ [String(sim.home)]: { cas: 1 }, [String(nodeB)]: { write: 1 } });
    expect(entries(sim.events)[1]).toMatchObject({ kind: 'passed', budget: 4 });
  });
});

describe('M2 (victim written before enqueueing) under a scripted interleaving', () => {
  /**
   * R (remote) swaps into T_R, writes victim = R at ~4.2 µs and reads T_L at ~6.3 µs. L (local) starts
   * at 3 µs and its CPU CAS on T_L takes up to 6 µs. With M2, L wrote victim = L *before* the CAS, so
   * R's later victim write releases L — while R, reading T_L before L's CAS landed, also enters.
   */
  async function script(seed: number, mutantVictimFirst: boolean) {
    const sim = scriptedSim({ seed, localRmwGapNs: 6_000 });
    const local = sim.client({ node: sim.home, client: 0 }, { mutantVictimFirst });
    const remote = sim.client({ node: sim.computeNodes[0]!, client: 1 });
    await sim.run([holdAt(sim, remote, 0, 20_000), holdAt(sim, local, 3_000, 20_000)]);
    return checkAlockEvents(sim.events, { localBudget: 5, remoteBudget: 5 }).violations;
  }

  it('the mutant lets both classes into the critical section; the correct order never does', async () => {
    const caught: number[] = [];
    for (let seed = 1; seed <= 10; seed++) {
      if ((await script(seed, true)).some((v) => v.startsWith('I1'))) caught.push(seed);
      expect(await script(seed, false), `seed ${seed}`).toEqual([]);
    }
    expect(caught.length).toBeGreaterThan(0);
  });
});
