import { describe, expect, it } from 'vitest';
import type { LockMode } from '@lockfabric/ports';
import { lockState, NO_AGENT } from './support/lock-state.js';
import type { MachineLockState } from './support/lock-state.js';
import { loggedSim } from './support/packet-log.js';

/**
 * Spec §4.1 workflows ①–⑨, one scenario each, on the simulator without faults. Every test checks
 * the exact packets exchanged — every hop through the switch, ACKs included — and the end state of
 * the decider's registers and of every machine's agent pool for the lock (lock 0). Machines are A,
 * B, C; `B/1#1` is client 1 of machine B, request id 1 (see support/packet-log.ts).
 */

type Sim = ReturnType<typeof loggedSim>;

const agent = (mode: 'S' | 'X', inca: number, holders: string[], wqueue: string[] = []): MachineLockState => ({ agent: { mode, inca, holders, wqueue }, pending: false, unacked: 0 });

/** Settles to true once `p` resolves, so a test can ask "granted yet?" between simulation steps. */
function watch<T>(p: Promise<T>): { readonly done: boolean } {
  const state = { done: false };
  void p.then(() => (state.done = true));
  return state;
}

async function acquire(sim: Sim, node: number, client: number, mode: LockMode) {
  const c = sim.client(node, client);
  const p = c.acquire(0, mode);
  await sim.step();
  return { client: c, grant: await p };
}

describe('fisslock workflows ①–⑨, one scripted scenario each (sim, no faults)', () => {
  it('① ACQUIRE on a free lock: the switch grants at once with an empty agent, which the requester installs', async () => {
    const sim = loggedSim();
    const [a] = sim.nodes as [number];
    await acquire(sim, a, 0, 'exclusive');
    // no ACK: the switch GRANT acknowledges the ACQUIRE
    expect(sim.log.lines()).toEqual(['A→sw acquire A/0 X', 'sw→A grant A/0 X [AGENT] inca=0']);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'exclusive', mid: a, inca: 0, pref: false },
      machines: { A: agent('X', 0, ['A/0#1']), B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('② shared ACQUIRE on a shared lock: GRANT to the requester at once, a GRANTED copy to the agent, which counts the holder', async () => {
    const sim = loggedSim();
    const [a, b] = sim.nodes as [number, number];
    await acquire(sim, a, 0, 'shared'); // ①
    const from = sim.log.mark();
    await acquire(sim, b, 1, 'shared');
    expect(sim.log.lines(from)).toEqual([
      'B→sw acquire B/1 S',
      'sw→B grant B/1 S', // the multicast replica, no agent
      'sw→A acquire B/1 S [GRANTED]',
      'A→sw ack accepted →B', // the agent's machine ACKs the requester
      'sw→B ack accepted →B',
    ]);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'shared', mid: a, inca: 1, pref: false },
      machines: { A: agent('S', 1, ['A/0#1', 'B/1#1']), B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('③ ACQUIRE that cannot be granted: the switch forwards it to the agent, which queues the requester', async () => {
    const sim = loggedSim();
    const [a, b] = sim.nodes as [number, number];
    await acquire(sim, a, 0, 'exclusive'); // ①
    const from = sim.log.mark();
    const waiting = watch(sim.client(b, 1).acquire(0, 'shared'));
    await sim.step();
    expect(waiting.done).toBe(false);
    expect(sim.log.lines(from)).toEqual(['B→sw acquire B/1 S', 'sw→A acquire B/1 S', 'A→sw ack accepted →B', 'sw→B ack accepted →B']);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'exclusive', mid: a, inca: 0, pref: false },
      machines: { A: agent('X', 0, ['A/0#1'], ['B/1#1 S']), B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('④ compatible request with a local agent: granted by the agent, no packet, the decider is not told', async () => {
    const sim = loggedSim();
    const [a] = sim.nodes as [number];
    await acquire(sim, a, 0, 'shared'); // ①
    const from = sim.log.mark();
    await acquire(sim, a, 1, 'shared');
    expect(sim.log.lines(from)).toEqual([]);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'shared', mid: a, inca: 0, pref: false },
      machines: { A: agent('S', 0, ['A/0#1', 'A/1#1']), B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('⑤ incompatible request with a local agent: queued locally without a packet; its grant comes later as a transfer GRANT through the switch', async () => {
    const sim = loggedSim();
    const [a] = sim.nodes as [number];
    const first = await acquire(sim, a, 0, 'exclusive'); // ①
    const from = sim.log.mark();
    const second = sim.client(a, 1).acquire(0, 'exclusive');
    const waiting = watch(second);
    await sim.step();
    expect(waiting.done).toBe(false);
    expect(sim.log.lines(from)).toEqual([]);
    expect(lockState(sim, 0).machines).toEqual({ A: agent('X', 0, ['A/0#1'], ['A/1#1 X']), B: NO_AGENT, C: NO_AGENT });
    await first.client.release(first.grant);
    await sim.step();
    await second;
    // the transfer goes through the decider even to the same machine (it updates mode and mid);
    // the grantee is the origin, so its ACK stays on the machine
    expect(sim.log.lines(from)).toEqual(['A→sw grant A/1 X [AGENT] inca=0', 'sw→A grant A/1 X [AGENT] inca=0']);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'exclusive', mid: a, inca: 0, pref: false },
      machines: { A: agent('X', 0, ['A/1#1']), B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('⑥ release at the local agent while another holder remains: the holder is removed, no packet', async () => {
    const sim = loggedSim();
    const [a, b] = sim.nodes as [number, number];
    const first = await acquire(sim, a, 0, 'shared'); // ①
    await acquire(sim, b, 1, 'shared'); // ②: B holds too
    const from = sim.log.mark();
    await first.client.release(first.grant);
    await sim.step();
    expect(sim.log.lines(from)).toEqual([]);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'shared', mid: a, inca: 1, pref: false },
      machines: { A: agent('S', 1, ['B/1#1']), B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('⑦ release of the last holder with no waiter: the agent is removed and sends FREE; the switch frees the lock and echoes it as the ACK', async () => {
    const sim = loggedSim();
    const [a] = sim.nodes as [number];
    const first = await acquire(sim, a, 0, 'exclusive'); // ①
    const from = sim.log.mark();
    await first.client.release(first.grant);
    await sim.step();
    expect(sim.log.lines(from)).toEqual(['A→sw free X inca=0', 'sw→A ack freed →A']);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: true, mode: 'exclusive', mid: undefined, inca: 0, pref: false },
      machines: { A: NO_AGENT, B: NO_AGENT, C: NO_AGENT },
    });
  });

  it('⑧ release of the last holder with waiters: the agent and its queue move to the head waiter through the decider; the shared run behind it is granted as followers', async () => {
    const sim = loggedSim();
    const [a, b, c] = sim.nodes as [number, number, number];
    const first = await acquire(sim, a, 0, 'exclusive'); // ①
    const waiters = [sim.client(b, 1).acquire(0, 'shared'), sim.client(c, 2).acquire(0, 'shared'), sim.client(c, 3).acquire(0, 'exclusive')].map((p) => {
      const w = watch(p);
      return () => w.done;
    });
    await sim.step(); // ③ ×3, queued at A in this order
    expect(lockState(sim, 0).machines['A']?.agent?.wqueue).toEqual(['B/1#1 S', 'C/2#1 S', 'C/3#1 X']);
    const from = sim.log.mark();
    await first.client.release(first.grant);
    await sim.step();
    expect(waiters.map((done) => done())).toEqual([true, true, false]);
    expect(sim.log.lines(from)).toEqual([
      // the queue behind the grantee travels as sequenced entries just before the agent GRANT
      'A→sw transfer C/2 S',
      'A→sw transfer C/3 X',
      'A→sw grant B/1 S [AGENT,WW_NEXT] inca=0 waiters=2',
      'sw→B transfer C/2 S',
      'B→sw ack accepted →A',
      'sw→B transfer C/3 X',
      'B→sw ack accepted →A',
      'sw→B grant B/1 S [AGENT,WW_NEXT] inca=0 waiters=2',
      // B installs the shared agent and grants the leading shared waiter with it (no agent)
      'B→sw grant C/2 S',
      'B→sw ack accepted →A',
      'sw→A ack accepted →A',
      'sw→A ack accepted →A',
      'sw→A ack accepted →A',
      'sw→C grant C/2 S',
      'C→sw ack accepted →B',
      'sw→B ack accepted →B',
    ]);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'shared', mid: b, inca: 0, pref: false },
      machines: { A: NO_AGENT, B: agent('S', 0, ['B/1#1', 'C/2#1'], ['C/3#1 X']), C: NO_AGENT },
    });
  });

  it('⑨ release on a machine without the agent: the RELEASE goes through the decider to the agent, which drops the holder', async () => {
    const sim = loggedSim();
    const [a, b] = sim.nodes as [number, number];
    await acquire(sim, a, 0, 'shared'); // ①
    const remote = await acquire(sim, b, 1, 'shared'); // ②
    const from = sim.log.mark();
    await remote.client.release(remote.grant);
    await sim.step();
    // GRANTED: the hold was a ② grant, which the agent learns of from the switch's copy (§13.4)
    expect(sim.log.lines(from)).toEqual(['B→sw release B/1 [GRANTED]', 'sw→A release B/1 [GRANTED]', 'A→sw ack accepted →B', 'sw→B ack accepted →B']);
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'shared', mid: a, inca: 1, pref: false },
      machines: { A: agent('S', 1, ['A/0#1']), B: NO_AGENT, C: NO_AGENT },
    });
  });
});
