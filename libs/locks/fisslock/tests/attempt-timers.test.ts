import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FLAG_HAS_AGENT } from '../src/wire.js';
import { lockState, NO_AGENT } from './support/lock-state.js';
import { loggedSim } from './support/packet-log.js';

const T_ACQ_NS = 10_000_000; // the default attemptTimeoutNs

/** Counts the AbortControllers made while it is installed (the T_ACQ timers are the only ones in these runs). */
function countControllers(): { readonly made: number } {
  const counter = { made: 0 };
  const Original = globalThis.AbortController;
  vi.stubGlobal(
    'AbortController',
    class extends Original {
      constructor() {
        super();
        counter.made++;
      }
    },
  );
  return counter;
}

const switchSharedGrant = (p: LockPacket): boolean => p.type === 'grant' && (p.flags & FLAG_HAS_AGENT) === 0 && p.agent === undefined;

// The T_ACQ timer of each attempt took an AbortController of its own: 2.5-3 % of a live compute
// node's processor time. One Stopper per acquire is enough, since only the attempt that ends it
// has a timer left to stop.
describe('fisslock attempt timers', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('an acquire that takes two attempts (its first GRANT lost) makes no AbortController (one Stopper per acquire)', async () => {
    const sim = loggedSim();
    const [a, b] = sim.nodes as [number, number];
    const ca = sim.client(a, 0);
    const cb = sim.client(b, 1);
    const first = ca.acquire(0, 'shared');
    await sim.step();
    const ga = await first;
    sim.fault({ direction: 'in', machine: b, match: switchSharedGrant, action: 'drop' });
    const controllers = countControllers();
    const retried = cb.acquire(0, 'shared', { timeoutMs: 15 });
    await sim.step(T_ACQ_NS + 2_000_000);
    const gb = await retried;
    const abortRelease = sim.log.entries.filter((e) => e.direction === 'out' && e.packet.type === 'release');
    expect(abortRelease).toHaveLength(1); // the first attempt timed out and was aborted: two attempts
    expect(controllers.made).toBe(0);
    await cb.release(gb);
    await ca.release(ga);
    await sim.step();
    expect(lockState(sim, 0).machines).toEqual({ A: NO_AGENT, B: NO_AGENT, C: NO_AGENT });
  });

  it('a grant by the local agent makes none', async () => {
    const sim = loggedSim({ protocolOptions: { placement: 'home' } });
    const [a] = sim.nodes as [number];
    const c = sim.client(a, 0);
    const warm = c.acquire(0, 'exclusive');
    await sim.step();
    await c.release(await warm); // the agent stays parked at lock 0's home
    await sim.step();
    const controllers = countControllers();
    for (let i = 0; i < 5; i++) {
      const p = c.acquire(0, 'exclusive');
      await sim.step();
      await c.release(await p);
      await sim.step();
    }
    expect(controllers.made).toBe(0);
  });

  it("the caller's abort still ends a waiting attempt: LOCK_ABORTED, and the lock goes on to others", async () => {
    const sim = loggedSim();
    const [a, b] = sim.nodes as [number, number];
    const holder = sim.client(a, 0);
    const held = holder.acquire(0, 'exclusive');
    await sim.step();
    const gh = await held;
    const caller = new AbortController();
    const waiting = sim.client(b, 1).acquire(0, 'exclusive', { signal: caller.signal, timeoutMs: 1_000 });
    const outcome = waiting.then(
      () => 'granted',
      (error: { code?: string }) => error.code,
    );
    await sim.step(1_000_000); // queued behind the holder, well inside T_ACQ
    caller.abort('test gives up');
    await sim.step(1_000_000);
    expect(await outcome).toBe('LOCK_ABORTED');
    await holder.release(gh);
    await sim.step(T_ACQ_NS);
    const next = sim.client(b, 2).acquire(0, 'exclusive', { timeoutMs: 100 });
    await sim.step(T_ACQ_NS);
    await sim.client(b, 2).release(await next);
    await sim.step(T_ACQ_NS);
  });

  // The live compute node's clients are recoverable (createFissLockClient): their acquire handed the
  // inner client a fresh AbortController each time, one of the node's top costs of its own per acquire.
  // Each acquire now has its own Stopper (synchronous, in-order dispatch like an AbortController's).
  it('a recoverable client makes no AbortController per acquire through the switch', async () => {
    const sim = loggedSim({ recoverableClients: true });
    const [a] = sim.nodes as [number];
    const c = sim.client(a, 0);
    const controllers = countControllers();
    for (let lock = 0; lock < 5; lock++) {
      const p = c.acquire(lock, 'exclusive');
      await sim.step();
      await c.release(await p);
      await sim.step();
    }
    const grants = sim.log.entries.filter((e) => e.direction === 'in' && e.packet.type === 'grant');
    expect(grants).toHaveLength(5); // every acquire went to the switch (①), none to a local agent
    expect(controllers.made).toBe(0);
  });

  it("a recoverable client whose caller aborted a wait is not left aborted: the next acquire is granted", async () => {
    const sim = loggedSim({ recoverableClients: true });
    const [a, b] = sim.nodes as [number, number];
    const holder = sim.client(a, 0);
    const gh = holder.acquire(0, 'exclusive');
    await sim.step();
    const held = await gh;
    const c = sim.client(b, 1);
    const caller = new AbortController();
    const waiting = c.acquire(0, 'exclusive', { signal: caller.signal, timeoutMs: 1_000 }).then(
      () => 'granted',
      (error: { code?: string }) => error.code,
    );
    await sim.step(1_000_000);
    caller.abort('test gives up');
    await sim.step(1_000_000);
    expect(await waiting).toBe('LOCK_ABORTED');
    await holder.release(held);
    await sim.step(T_ACQ_NS);
    const controllers = countControllers();
    const next = c.acquire(1, 'exclusive', { timeoutMs: 100 });
    await sim.step(T_ACQ_NS);
    await c.release(await next);
    expect(controllers.made).toBe(0); // the next acquire has a fresh Stopper of its own
  });
});
