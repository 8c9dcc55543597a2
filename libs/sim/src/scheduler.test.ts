import { createHook } from 'node:async_hooks';
import { lockAddress } from '@lockfabric/ports';
import type { ClientPorts, Verbs } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_NETWORK, InMemoryCluster } from './cluster.js';
import { SeededRandom } from './random.js';
import { MACROTASK_EVERY_EVENTS, VirtualScheduler } from './scheduler.js';
import { createSimCluster } from './substrates.js';

/** A CAS spinlock client: `rounds` acquire/release pairs on one of `locks` words, picked by the seeded stream. */
async function casClient(ports: ClientPorts, rounds: number, locks: number, held: Set<number>): Promise<void> {
  const me = BigInt(ports.self.client + 1);
  for (let i = 0; i < rounds; i++) {
    const lock = ports.random.int(locks);
    const addr = lockAddress(ports.locks, lock);
    while ((await ports.verbs.cas(addr, 0n, me)) !== 0n);
    if (held.has(lock)) throw new Error(`lock ${lock} granted twice`);
    held.add(lock);
    held.delete(lock);
    await ports.verbs.cas(addr, me, 0n);
  }
}

async function casRun(
  seed: number,
  clients = 32,
  rounds = 40,
  engine?: VirtualScheduler,
  wrapVerbs?: (verbs: Verbs) => Verbs,
): Promise<{ verbs: number; events: number; turns: number; immediates: number; promises: number; endNs: number; order: string }> {
  const { cluster, scheduler } = engine
    ? { cluster: new InMemoryCluster({ ...DEFAULT_SIM_NETWORK, memoryNodes: 1, computeNodes: 2, lockCount: 8, entryBytes: 8, scheduler: engine, random: new SeededRandom(seed) }), scheduler: engine }
    : createSimCluster({ seed, lockCount: 8, entryBytes: 8, computeNodes: 2 });
  const held = new Set<number>();
  const order: number[] = [];
  let immediates = 0;
  let promises = 0;
  // Every macrotask turn the engine takes goes through an Immediate (or a Timeout): count both.
  // Promises are counted too: each one is an allocation and usually a microtask hop of a verb.
  const hook = createHook({
    init: (_id, type) => {
      if (type === 'Immediate' || type === 'Timeout') immediates++;
      else if (type === 'PROMISE') promises++;
    },
  });
  const runs = Array.from({ length: clients }, (_, i) => {
    const ports = cluster.clientPorts({ node: cluster.computeNodeIds[i % 2]!, client: i });
    return casClient(wrapVerbs ? { ...ports, verbs: wrapVerbs(ports.verbs) } : ports, rounds, 8, held).then(() => void order.push(i));
  });
  hook.enable();
  const outcome = await scheduler.run();
  hook.disable();
  await Promise.all(runs);
  const verbs = Object.values(cluster.nicCounters()).reduce((sum, c) => sum + c.verbs, 0);
  return { verbs, events: outcome.events, turns: scheduler.macrotaskTurns, immediates, promises, endNs: outcome.endNs, order: order.join(',') };
}

/**
 * Test-only mutant of the verb path: each CAS goes through one more async frame, as the one-verb
 * helpers did before they chained on the post's promise (queue-pair-verbs.ts).
 */
function asyncFrameVerbs(verbs: Verbs): Verbs {
  return Object.assign(Object.create(verbs) as Verbs, {
    cas: async (...args: Parameters<Verbs['cas']>) => await verbs.cas(...args),
  });
}

/**
 * Promises per step of the least a verb can cost on this engine, counted in this process: a
 * settled-by-event promise, two reactions and an await, on a VirtualScheduler with the verbs'
 * jitter. How many promises an `await` counts for depends on the V8 version; a reference counted
 * the same way makes the budget hold on every Node the project supports.
 */
async function bareVerbPromises(clients: number, steps: number): Promise<number> {
  const scheduler = new VirtualScheduler();
  const random = new SeededRandom(3);
  const same = <T>(value: T): T => value;
  let promises = 0;
  const hook = createHook({
    init: (_id, type) => {
      if (type === 'PROMISE') promises++;
    },
  });
  const task = async (): Promise<void> => {
    for (let i = 0; i < steps; i++) {
      await new Promise<number>((resolve) => scheduler.at(scheduler.nowNs() + 2_000 + random.int(200), () => resolve(i))).then(same).then(same);
    }
  };
  hook.enable();
  const tasks = Array.from({ length: clients }, task);
  await scheduler.run();
  hook.disable();
  await Promise.all(tasks);
  return promises / (clients * steps);
}

/** What the CAS loop may spend per verb beyond the bare path (the cluster's own bookkeeping); the mutant's async frame costs more. */
const PROMISE_ALLOWANCE_PER_VERB = 0.5;

/** The engine's budget: at most one event-loop turn per MACROTASK_EVERY_EVENTS events, and under 1 % of verbs. */
function withinTurnBudget(run: { verbs: number; events: number; turns: number; immediates: number }): boolean {
  return run.turns <= Math.ceil(run.events / MACROTASK_EVERY_EVENTS) + 1 && run.immediates / run.verbs < 0.01;
}

describe('VirtualScheduler.run', () => {
  it('takes far fewer event-loop turns than verbs: continuations drain without a macrotask per event', async () => {
    const run = await casRun(11, 64, 200);
    expect(run.verbs).toBeGreaterThan(4 * MACROTASK_EVERY_EVENTS);
    // One turn per MACROTASK_EVERY_EVENTS events, not one per look-ahead window (≈ one per verb).
    expect(run.turns).toBeLessThanOrEqual(Math.ceil(run.events / MACROTASK_EVERY_EVENTS) + 1);
    expect(run.immediates / run.verbs).toBeLessThan(0.01);
    expect(withinTurnBudget(run)).toBe(true);
  });

  it('the turn budget catches the mutant engine that yields a macrotask per window', async () => {
    const mutant = await casRun(11, 64, 60, new VirtualScheduler(50, 1));
    // Counted, not timed: the Immediates the mutant queued, per simulated verb.
    expect(mutant.immediates / mutant.verbs).toBeGreaterThan(0.1);
    expect(withinTurnBudget(mutant)).toBe(false);
    // Same schedule either way: when the turns fall is no part of what the simulation computes.
    const fast = await casRun(11, 64, 60);
    expect({ ...fast, turns: 0, immediates: 0, promises: 0 }).toEqual({ ...mutant, turns: 0, immediates: 0, promises: 0 });
  });

  it('spends a bounded number of promises per simulated verb, and catches a verb path with one more', async () => {
    const run = await casRun(11, 64, 60);
    const mutant = await casRun(11, 64, 60, undefined, asyncFrameVerbs);
    const bare = await bareVerbPromises(64, 500);
    // Counted, not timed: promises created per verb the NICs served, against the bare path's. On
    // Node 20: bare 4.38, the engine 4.37, the mutant's extra async frame 6.37. Same schedule
    // either way: the extra hop delays every CAS continuation alike.
    expect(run.verbs).toBe(mutant.verbs);
    expect(run.promises / run.verbs).toBeLessThan(bare + PROMISE_ALLOWANCE_PER_VERB);
    expect(mutant.promises / mutant.verbs).toBeGreaterThanOrEqual(bare + PROMISE_ALLOWANCE_PER_VERB);
  });

  it('runs events by time, ties in scheduling order, through heap growth and events scheduled while running', async () => {
    const scheduler = new VirtualScheduler(0);
    const random = new SeededRandom(5);
    const expected: { id: number; timeNs: number }[] = [];
    const ran: number[] = [];
    let next = 0;
    // 5 000 events over 300 distinct times (many ties), beyond the queue's initial 1 024 slots;
    // each of the first 1 000 schedules one more at its own time or later.
    const schedule = (timeNs: number): void => {
      const id = next++;
      expected.push({ id, timeNs });
      scheduler.at(timeNs, () => {
        ran.push(id);
        if (id < 1_000) schedule(scheduler.nowNs() + random.int(3));
      });
    };
    for (let i = 0; i < 4_000; i++) schedule(random.int(300));
    const outcome = await scheduler.run();
    expect(outcome.events).toBe(5_000);
    // A stable sort by time is the (time, scheduling order) the scheduler promises.
    expect(ran).toStrictEqual([...expected].sort((a, b) => a.timeNs - b.timeNs).map((e) => e.id));
  });

  it('is deterministic: the same seed gives the same schedule, event count and end time', async () => {
    const a = await casRun(5, 16, 20);
    const b = await casRun(5, 16, 20);
    // Promises are left out: the test runner's own (timers, reporting) land in the count too.
    expect({ ...b, promises: 0 }).toEqual({ ...a, promises: 0 });
    const c = await casRun(6, 16, 20);
    expect(c.order === a.order && c.endNs === a.endNs).toBe(false);
  });

  it('runs a long chain of continuations woken by one event before the next event', async () => {
    const scheduler = new VirtualScheduler(0);
    const seen: string[] = [];
    let resolveFirst!: () => void;
    const first = new Promise<void>((resolve) => (resolveFirst = resolve));
    void (async () => {
      await first;
      // Many hops through nested async functions, then a scheduling call at the same time.
      const hop = async (n: number): Promise<number> => (n === 0 ? 0 : 1 + (await hop(n - 1)));
      await hop(200);
      seen.push(`chain done at ${scheduler.nowNs()}`);
      scheduler.at(scheduler.nowNs(), () => seen.push('scheduled by the chain'));
    })();
    scheduler.at(10, () => resolveFirst());
    scheduler.at(10, () => seen.push('second event at 10'));
    scheduler.at(20, () => seen.push('event at 20'));
    await scheduler.run();
    // Same-time events are one window only with a look-ahead; with 0 each event drains on its own.
    expect(seen).toEqual(['chain done at 10', 'second event at 10', 'scheduled by the chain', 'event at 20']);
  });

  it('finds work started just before run() and reports an exception thrown by an event', async () => {
    const scheduler = new VirtualScheduler();
    const late = (async () => {
      await Promise.resolve();
      await Promise.resolve();
      await new Promise<void>((resolve) => scheduler.at(5, resolve));
      return scheduler.nowNs();
    })();
    await expect(scheduler.run()).resolves.toMatchObject({ events: 1, endNs: 5, reason: 'idle' });
    await expect(late).resolves.toBe(5);
    scheduler.at(7, () => {
      throw new Error('boom');
    });
    await expect(scheduler.run()).rejects.toThrow('boom');
  });
});
