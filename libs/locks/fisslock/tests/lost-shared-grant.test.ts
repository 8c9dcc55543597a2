import { describe, expect, it } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FLAG_HAS_AGENT } from '../src/wire.js';
import { lockState, NO_AGENT } from './support/lock-state.js';
import { loggedSim } from './support/packet-log.js';

const T_ACQ_NS = 10_000_000; // the default attemptTimeoutNs

/** A switch ② GRANT: no agent, and no `agent` (src) field, which only server-sent packets carry. */
const switchSharedGrant = (p: LockPacket): boolean => p.type === 'grant' && (p.flags & FLAG_HAS_AGENT) === 0 && p.agent === undefined;

describe('fisslock: lost ② GRANT (spec §5.2, §11)', () => {
  it('the switch’s GRANT replica is lost: the client times out after T_ACQ, its abort-RELEASE reaches the agent, which drops the holder; the retry is granted and the lock frees with matching incarnations', async () => {
    const sim = loggedSim();
    const [a, b] = sim.nodes as [number, number];
    const ca = sim.client(a, 0);
    const cb = sim.client(b, 1);
    const first = ca.acquire(0, 'shared');
    await sim.step();
    const ga = await first; // ①: the agent is at A
    const from = sim.log.mark();
    const lost = sim.fault({ direction: 'in', machine: b, match: switchSharedGrant, action: 'drop' });
    const startNs = sim.cluster.clock.nowNs();
    const retried = cb.acquire(0, 'shared', { timeoutMs: 15 });
    await sim.step(T_ACQ_NS + 2_000_000);
    const gb = await retried;
    expect(lost.fired?.task).toBe(gb.task - 1); // the first request id's GRANT
    expect(sim.log.lines(from)).toEqual([
      'B→sw acquire B/1 S',
      'sw→B grant B/1 S', // on the link; the scripted fault drops it before B's pool
      'sw→A acquire B/1 S [GRANTED]', // the agent counts B/1#1 as a holder (inca 1)
      'A→sw ack accepted →B', // so B knows its request reached the agent: the abort carries REACHED
      'sw→B ack accepted →B',
      // T_ACQ later: abort-RELEASE of request 1, then the retry as request 2
      'B→sw release B/1 [ABORT,REACHED]',
      'B→sw acquire B/1 S',
      'sw→A release B/1 [ABORT,REACHED]', // routed to the agent, not freed at the switch
      'A→sw ack accepted →B',
      'sw→A acquire B/1 S [GRANTED]',
      'A→sw ack accepted →B',
      'sw→B grant B/1 S',
      'sw→B ack accepted →B',
      'sw→B ack accepted →B',
    ]);
    const abort = sim.log.entries.find((e) => e.direction === 'out' && e.packet.type === 'release');
    expect(abort?.atNs).toBe(startNs + T_ACQ_NS);
    expect(sim.sw.counters().decisions['timeout-free']).toBeUndefined();
    // B/1#1 left the holders; both ② grants were counted on both sides
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'shared', mid: a, inca: 2, pref: false },
      machines: { A: { agent: { mode: 'S', inca: 2, holders: ['A/0#1', 'B/1#2'], wqueue: [] }, pending: false, unacked: 0 }, B: NO_AGENT, C: NO_AGENT },
    });
    await cb.release(gb); // ⑨
    await ca.release(ga); // ⑦: FREE with inca 2, accepted
    await sim.step();
    expect(sim.sw.counters().decisions['free-accepted']).toBe(1);
    expect(sim.sw.counters().decisions['free-refused']).toBeUndefined();
    expect(lockState(sim, 0)).toEqual({
      decider: { free: true, mode: 'shared', mid: undefined, inca: 0, pref: false },
      machines: { A: NO_AGENT, B: NO_AGENT, C: NO_AGENT },
    });
  });
});
