import { describe, expect, it } from 'vitest';
import type { LockMode } from '@lockfabric/ports';
import { lockState, NO_AGENT } from './support/lock-state.js';
import type { MachineLockState } from './support/lock-state.js';
import { loggedSim } from './support/packet-log.js';

/**
 * FissLock-Local (placement=home, pool/home-parking.ts) on the simulator without faults: the exact
 * packets of each path and the end state. Lock 0's home is machine A (ParLock's `lock mod n` over
 * A, B, C), lock 1's is B.
 */

type Sim = ReturnType<typeof loggedSim>;
const HOME = { placement: 'home' };

const agent = (mode: 'S' | 'X', inca: number, holders: string[], wqueue: string[] = []): MachineLockState => ({ agent: { mode, inca, holders, wqueue }, pending: false, unacked: 0 });

function watch<T>(p: Promise<T>): { readonly done: boolean } {
  const state = { done: false };
  void p.then(() => (state.done = true));
  return state;
}

async function hold(sim: Sim, node: number, client: number, mode: LockMode, lock = 0) {
  const c = sim.client(node, client);
  const p = c.acquire(lock, mode);
  await sim.step();
  return { client: c, grant: await p };
}

async function cycle(sim: Sim, node: number, client: number, mode: LockMode, lock = 0): Promise<void> {
  const h = await hold(sim, node, client, mode, lock);
  await h.client.release(h.grant);
  await sim.step();
}

describe('fisslock placement=home (FissLock-Local): parked agents at the lock\'s home', () => {
  it('uncontended at the home: 2 packets for the first acquire (①), none for its release (parked) or for any later cycle', async () => {
    const sim = loggedSim({ protocolOptions: HOME });
    const [a] = sim.nodes as [number];
    for (let client = 0; client < 5; client++) await cycle(sim, a, client, 'exclusive');
    expect(sim.log.lines()).toEqual(['A→sw acquire A/0 X', 'sw→A grant A/0 X [AGENT] inca=0']);
    expect(sim.pool(a).counters.parkedGrants).toBe(4);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'exclusive', mid: a, inca: 0, pref: false },
      machines: { A: agent('X', 0, []), B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('the same five cycles under placement=migrate (FissLock) cost 4 packets each: ① ACQUIRE + GRANT, ⑦ FREE + its echo', async () => {
    const sim = loggedSim();
    const [a] = sim.nodes as [number];
    for (let client = 0; client < 5; client++) await cycle(sim, a, client, 'exclusive');
    expect(sim.log.lines()).toHaveLength(20);
    expect(lockState(sim, 0).decider.free).toBe(true);
  });

  it('a lock idle away from its home is freed as in FissLock (⑦): only the home parks', async () => {
    const sim = loggedSim({ protocolOptions: HOME });
    const [a] = sim.nodes as [number];
    await cycle(sim, a, 0, 'exclusive', 1); // lock 1's home is B
    expect(sim.log.lines()).toEqual(['A→sw acquire A/0 X', 'sw→A grant A/0 X [AGENT] inca=0', 'A→sw free X inca=0', 'sw→A ack freed →A']);
    expect(lockState(sim, 1).decider.free).toBe(true);
  });

  it('a remote request reaches the parked agent through the decider (③) and is granted by transfer at once', async () => {
    const sim = loggedSim({ protocolOptions: HOME });
    const [a, b] = sim.nodes as [number, number];
    await cycle(sim, a, 0, 'exclusive');
    const from = sim.log.mark();
    const remote = await hold(sim, b, 1, 'exclusive');
    // 8 packets: ACQUIRE and its forward, the transfer GRANT and its delivery, two ACKs (the
    // agent's of the ACQUIRE, the grantee's of the GRANT) each across two hops (order varies with jitter)
    expect(sim.log.lines(from).sort()).toEqual([
      'B→sw acquire B/1 X',
      'sw→A acquire B/1 X',
      'A→sw grant B/1 X [AGENT] inca=0',
      'A→sw ack accepted →B',
      'sw→B grant B/1 X [AGENT] inca=0',
      'B→sw ack accepted →A',
      'sw→B ack accepted →B',
      'sw→A ack accepted →A',
    ].sort());
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'exclusive', mid: b, inca: 0, pref: false },
      machines: { A: NO_AGENT, B: agent('X', 0, ['B/1#1']), C: NO_AGENT },
    });
    await remote.client.release(remote.grant);
    await sim.step();
    expect(lockState(sim, 0).decider.free).toBe(true); // B is not lock 0's home: ⑦
  });

  it('a home request of the other mode frees the parked agent and asks the decider (Lemma 1: no mode change without the switch)', async () => {
    const sim = loggedSim({ protocolOptions: HOME });
    const [a] = sim.nodes as [number];
    await cycle(sim, a, 0, 'exclusive');
    const from = sim.log.mark();
    await hold(sim, a, 1, 'shared');
    expect(sim.log.lines(from)).toEqual(['A→sw free X inca=0', 'A→sw acquire A/1 S', 'sw→A ack freed →A', 'sw→A grant A/1 S [AGENT] inca=0']);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'shared', mid: a, inca: 0, pref: false },
      machines: { A: agent('S', 0, ['A/1#1']), B: NO_AGENT, C: NO_AGENT },
    });
  });

  // The mutant grants a home writer on an agent parked shared without the switch: the decider still
  // says shared, so it grants the next remote reader at once (②) beside the writer.
  for (const mutant of [false, true]) {
    it(`${mutant ? 'mutant mutantParkedModeChange: a remote reader is granted beside the home writer (caught)' : 'a remote reader waits while the home writer holds'}`, async () => {
      const sim = loggedSim({ protocolOptions: { ...HOME, mutantParkedModeChange: mutant } });
      const [a, b] = sim.nodes as [number, number];
      await cycle(sim, a, 0, 'shared'); // parked shared at A
      const writer = await hold(sim, a, 1, 'exclusive');
      const reader = watch(sim.client(b, 2).acquire(0, 'shared'));
      await sim.step(1_000_000);
      expect(reader.done).toBe(mutant);
      if (mutant) return;
      await writer.client.release(writer.grant);
      await sim.step(1_000_000);
      expect(reader.done).toBe(true);
    });
  }
});
