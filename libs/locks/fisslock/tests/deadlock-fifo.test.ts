import { describe, expect, it } from 'vitest';
import { LockTimeoutError } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import { lockState, NO_AGENT } from './support/lock-state.js';
import { loggedSim } from './support/packet-log.js';

const T_ACQ_NS = 10_000_000; // the default attemptTimeoutNs (spec §12.15)

describe('fisslock deadlock abort (spec §4.5, §11 property 13)', () => {
  it('two clients each holding one lock and asking for the other’s both time out after T_ACQ, abort, and after the holders release a third client takes both', async () => {
    const sim = loggedSim();
    const [a, b, c] = sim.nodes as [number, number, number];
    const ca = sim.client(a, 0);
    const cb = sim.client(b, 0);
    const heldA = ca.acquire(0, 'exclusive');
    const heldB = cb.acquire(1, 'exclusive');
    await sim.step();
    const ga = await heldA;
    const gb = await heldB;
    const from = sim.log.mark();
    const startNs = sim.cluster.clock.nowNs();
    // the cycle: A wants lock 1 (held at B), B wants lock 0 (held at A); both are queued (③)
    const wantA = ca.acquire(1, 'exclusive', { timeoutMs: T_ACQ_NS / 1e6 }).then(
      () => 'granted',
      (e: unknown) => e,
    );
    const wantB = cb.acquire(0, 'exclusive', { timeoutMs: T_ACQ_NS / 1e6 }).then(
      () => 'granted',
      (e: unknown) => e,
    );
    await sim.step(T_ACQ_NS / 2);
    expect(lockState(sim, 0).machines['A']?.agent?.wqueue).toEqual(['B/0#2 X']);
    expect(lockState(sim, 1).machines['B']?.agent?.wqueue).toEqual(['A/0#2 X']);
    await sim.step(T_ACQ_NS);
    expect(await wantA).toBeInstanceOf(LockTimeoutError);
    expect(await wantB).toBeInstanceOf(LockTimeoutError);
    // each abort-RELEASE goes out at T_ACQ (REACHED: an agent ACKed the ACQUIRE, so the switch
    // routes it to the agent) and removes the waiter there; the agent ACKs it
    const aborts = sim.log.entries.slice(from).filter((e) => e.packet.type === 'release');
    expect(aborts.filter((e) => e.direction === 'out').map((e) => e.atNs - startNs)).toEqual([T_ACQ_NS, T_ACQ_NS]);
    expect(sim.log.lines(from, (e) => e.atNs > startNs + T_ACQ_NS / 2)).toEqual([
      'A→sw release A/0 [ABORT,REACHED]',
      'B→sw release B/0 [ABORT,REACHED]',
      'sw→A release B/0 [ABORT,REACHED]',
      'A→sw ack accepted →B',
      'sw→B release A/0 [ABORT,REACHED]',
      'B→sw ack accepted →A',
      'sw→B ack accepted →B',
      'sw→A ack accepted →A',
    ]);
    expect(sim.sw.counters().decisions['release-routed']).toBe(2);
    expect(lockState(sim, 0).machines['A']?.agent).toEqual({ mode: 'X', inca: 0, holders: ['A/0#1'], wqueue: [] });
    expect(lockState(sim, 1).machines['B']?.agent).toEqual({ mode: 'X', inca: 0, holders: ['B/0#1'], wqueue: [] });

    await ca.release(ga);
    await cb.release(gb);
    await sim.step();
    for (const lock of [0, 1]) {
      expect(lockState(sim, lock)).toEqual({
        decider: { free: true, mode: 'exclusive', mid: undefined, inca: 0, pref: false },
        machines: { A: NO_AGENT, B: NO_AGENT, C: NO_AGENT },
      });
    }
    for (const node of sim.nodes) expect(sim.pool(node).waitingTasks().length).toBe(0);

    const third = sim.client(c, 0);
    const both = Promise.all([third.acquire(0, 'exclusive', { timeoutMs: 1 }), third.acquire(1, 'exclusive', { timeoutMs: 1 })]);
    await sim.step();
    expect((await both).map((g) => g.lock)).toEqual([0, 1]);
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mid: c });
    expect(sim.decider.meta(1)).toMatchObject({ free: false, mid: c });
  });
});

describe('fisslock FIFO wait queue (spec §4.5, §11 property 11)', () => {
  /**
   * `queue` waiters (machine index, client, mode) ask for lock 0 one after another while A/0 holds
   * it exclusively, so the agent queues them in this order (③, or ⑤ for A's own clients). Each
   * holds 30 µs once granted. Returns the grant / release events in order.
   */
  async function grantOrder(queue: readonly (readonly [number, number, LockMode])[]): Promise<{ events: string[]; queued: readonly string[] | undefined }> {
    const sim = loggedSim();
    const first = sim.client(sim.nodes[0]!, 0);
    const held = first.acquire(0, 'exclusive');
    await sim.step();
    const g0 = await held;
    const events: string[] = [];
    const waits: Promise<void>[] = [];
    for (const [machine, client, mode] of queue) {
      const name = `${String.fromCharCode(65 + machine)}/${client}`;
      const c = sim.client(sim.nodes[machine]!, client);
      waits.push(
        c.acquire(0, mode).then(async (g) => {
          events.push(`grant ${name}`);
          await sim.cluster.clock.sleep(30_000);
          events.push(`release ${name}`);
          await c.release(g);
        }),
      );
      await sim.step(50_000);
    }
    const queued = lockState(sim, 0).machines['A']?.agent?.wqueue;
    await first.release(g0);
    await sim.step(5_000_000);
    await Promise.all(waits);
    expect(sim.decider.meta(0)).toMatchObject({ free: true, mid: undefined, inca: 0 });
    return { events, queued };
  }

  it('exclusive waiters on three machines (one queued locally at the agent) are granted in the order they were queued', async () => {
    const { events, queued } = await grantOrder([
      [1, 1, 'exclusive'],
      [2, 2, 'exclusive'],
      [0, 3, 'exclusive'], // ⑤ at A's agent
      [1, 4, 'exclusive'],
      [2, 5, 'exclusive'],
    ]);
    expect(queued).toEqual(['B/1#1 X', 'C/2#1 X', 'A/3#1 X', 'B/4#1 X', 'C/5#1 X']);
    expect(events.filter((e) => e.startsWith('grant'))).toEqual(['grant B/1', 'grant C/2', 'grant A/3', 'grant B/4', 'grant C/5']);
    // one holder at a time
    expect(events).toEqual(['B/1', 'C/2', 'A/3', 'B/4', 'C/5'].flatMap((w) => [`grant ${w}`, `release ${w}`]));
  });

  it('a run of consecutive shared waiters is granted together, in queue order, and nothing overtakes the writer behind it', async () => {
    const { events, queued } = await grantOrder([
      [1, 1, 'exclusive'],
      [2, 2, 'shared'],
      [1, 3, 'shared'],
      [0, 4, 'exclusive'],
      [2, 5, 'shared'],
    ]);
    expect(queued).toEqual(['B/1#1 X', 'C/2#1 S', 'B/3#1 S', 'A/4#1 X', 'C/5#1 S']);
    expect(events).toEqual([
      'grant B/1',
      'release B/1',
      'grant C/2', // transfer grantee
      'grant B/3', // its shared follower, before either releases
      'release C/2',
      'release B/3',
      'grant A/4',
      'release A/4',
      'grant C/5',
      'release C/5',
    ]);
  });
});
