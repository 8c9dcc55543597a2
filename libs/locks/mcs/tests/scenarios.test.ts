import { ConfigError, LockAbortedError, LockTimeoutError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { GrantNotHeldError, NEXT_OFFSET, decodePointer, encodePointer, fieldAddr, mcs } from '../src/index.js';
import type { McsGrant } from '../src/index.js';
import { recordingTrace } from './recording-trace.js';
import { diff, scenario } from './scenario.js';

const ref = (s: ReturnType<typeof scenario>, index: number, queueNode = 0) => {
  const node = s.cluster.computeNodeIds[index % s.cluster.computeNodeIds.length]!;
  return { node, client: index, index: queueNode };
};

describe('mcs: the queue, step by step (ShiftLock Algorithm 1 on RDMA)', () => {
  it('builds the queue in the tail word and the next pointers, and hands over in arrival order', async () => {
    const s = scenario();
    const clients = [0, 1, 2, 3].map((i) => s.client(i));
    const granted: number[] = [];
    const tails: bigint[] = [];
    const nextOf = (i: number) => {
      const slot = clients[i]!.ports.descriptors.self;
      return s.cluster.node(slot.node).memory.cpuLoad(fieldAddr(slot, 0, NEXT_OFFSET));
    };
    const run = (async () => {
      const first = await clients[0]!.lock.acquire(7, 'exclusive');
      tails.push(s.tailWord(7));
      const waits = [1, 2, 3].map(async (i) => {
        await s.at(i * 10_000);
        const grant = await clients[i]!.lock.acquire(7, 'exclusive');
        granted.push(i);
        await s.at(s.now() + 1_000);
        await clients[i]!.lock.release(grant);
      });
      await s.at(40_000);
      tails.push(s.tailWord(7));
      expect([1, 2].map(nextOf)).toEqual([encodePointer(ref(s, 2)), encodePointer(ref(s, 3))]);
      expect(nextOf(0)).toBe(encodePointer(ref(s, 1)));
      expect(nextOf(3)).toBe(0n);
      expect(granted).toEqual([]);
      await clients[0]!.lock.release(first);
      await Promise.all(waits);
    })();
    await s.scheduler.run();
    await run;
    expect(tails.map(decodePointer)).toEqual([ref(s, 0), ref(s, 3)]);
    expect(granted).toEqual([1, 2, 3]);
    expect(s.tailWord(7)).toBe(0n);
  });

  it('a releaser whose CAS loses to a successor still mid-enqueue waits for the link, then hands over', async () => {
    const s = scenario();
    const a = s.client(0);
    const b = s.client(1);
    let releaseVerbs = {};
    let bGrantedAt = 0;
    const run = (async () => {
      const grantA = await a.lock.acquire(1, 'exclusive');
      const startB = s.now() + 5_000;
      await s.at(startB);
      const waiting = b.lock.acquire(1, 'exclusive').then((g) => ((bGrantedAt = s.now()), g));
      // B's swap runs about 2.2 µs after it starts and its link WRITE another 2 µs later; A's
      // CAS, started 1.5 µs after B, runs between the two and finds B in the tail.
      await s.at(startB + 1_500);
      const before = s.verbs();
      await a.lock.release(grantA);
      releaseVerbs = { mn: diff(s.verbs().mn, before.mn), cn: diff(s.verbs().cn, before.cn) };
      await b.lock.release(await waiting);
    })();
    await s.scheduler.run();
    await run;
    // While A released: B's swap landed, then A's CAS (which found B in the tail), B's link WRITE
    // and A's handover WRITE. Had the CAS won, there would be no handover WRITE and B would hang.
    expect(releaseVerbs).toEqual({ mn: { 'masked-cas': 1, cas: 1 }, cn: { write: 2 } });
    expect(bGrantedAt).toBeGreaterThan(0);
    expect(s.tailWord(1)).toBe(0n);
  });
});

describe('mcs: handover spans', () => {
  it('the releaser opens lock.handover and the next holder links its lock.acquire span to it', async () => {
    const trace = recordingTrace();
    const s = scenario({ trace });
    const a = s.client(0);
    const b = s.client(1);
    const run = (async () => {
      const grantA = await a.lock.acquire(4, 'exclusive');
      const waiting = b.lock.acquire(4, 'exclusive');
      await s.at(s.now() + 10_000);
      await a.lock.release(grantA);
      await b.lock.release(await waiting);
    })();
    await s.scheduler.run();
    await run;
    const handovers = trace.spans.filter((span) => span.name === 'lock.handover');
    expect(handovers).toHaveLength(1);
    expect(handovers[0]!.attributes).toMatchObject({ 'lockfabric.handover.from': '1/0', 'lockfabric.handover.to': '2/1', 'lockfabric.lock.id': 4 });
    expect(handovers[0]!.ended).toBe(true);
    const acquires = trace.spans.filter((span) => span.name === 'lock.acquire');
    expect(acquires.map((span) => span.links.length)).toEqual([0, 1]);
    expect(acquires[1]!.links[0]!.context).toEqual(handovers[0]!.context);
  });
});

describe('mcs: giving up, and limits', () => {
  it('a waiter that times out stays queued in the background and passes the lock on when it comes', async () => {
    const s = scenario();
    const [a, b, c] = [0, 1, 2].map((i) => s.client(i)) as [ReturnType<typeof s.client>, ReturnType<typeof s.client>, ReturnType<typeof s.client>];
    const events: string[] = [];
    const run = (async () => {
      const grantA = await a.lock.acquire(2, 'exclusive');
      const bWait = b.lock.acquire(2, 'exclusive', { timeoutMs: 0.02 }).catch((error: unknown) => {
        events.push(error instanceof LockTimeoutError ? 'b timed out' : 'b failed otherwise');
      });
      await s.at(s.now() + 5_000);
      const cWait = c.lock.acquire(2, 'exclusive').then((grant) => (events.push('c granted'), grant));
      await s.at(s.now() + 50_000);
      events.push('a releases');
      await a.lock.release(grantA);
      await bWait;
      await c.lock.release(await cWait);
      // B's queue node came back: it can take the lock again.
      await b.lock.release(await b.lock.acquire(2, 'exclusive'));
      events.push('b granted later');
    })();
    await s.scheduler.run();
    await run;
    expect(events).toEqual(['b timed out', 'a releases', 'c granted', 'b granted later']);
    expect(s.tailWord(2)).toBe(0n);
  });

  it('an abort signal ends a queued acquire with LockAbortedError', async () => {
    const s = scenario();
    const a = s.client(0);
    const b = s.client(1);
    const controller = new AbortController();
    let outcome: unknown;
    const run = (async () => {
      const grantA = await a.lock.acquire(3, 'exclusive');
      const bWait = b.lock.acquire(3, 'exclusive', { signal: controller.signal }).catch((error: unknown) => (outcome = error));
      await s.at(s.now() + 10_000);
      controller.abort(new Error('caller gave up'));
      await bWait;
      await a.lock.release(grantA);
    })();
    await s.scheduler.run();
    await run;
    expect(outcome).toBeInstanceOf(LockAbortedError);
    expect((outcome as Error).message).toContain('caller gave up');
    expect(s.tailWord(3)).toBe(0n);
  });

  it('a client holds 16 locks at once (a 2PL transaction at its widest), the 17th is refused and says why', async () => {
    const s = scenario();
    const a = s.client(0);
    const locks = Array.from({ length: 16 }, (_, i) => i);
    let extra: unknown;
    const run = (async () => {
      const grants: McsGrant[] = [];
      for (const lock of locks) grants.push(await a.lock.acquire(lock, 'exclusive'));
      // Refused before any verb: no queue node is free, so the table is not touched.
      extra = await a.lock.acquire(0, 'exclusive').catch((error: unknown) => error);
      await a.lock.release(grants.shift()!);
      grants.push(await a.lock.acquire(0, 'exclusive'));
      for (const grant of grants.reverse()) await a.lock.release(grant);
    })();
    await s.scheduler.run();
    await run;
    expect(extra).toBeInstanceOf(LockAbortedError);
    expect((extra as Error).message).toContain('16 MCS locks');
    expect(locks.map(s.tailWord)).toEqual(locks.map(() => 0n));
  });

  it('releasing a grant twice is refused with a typed error', async () => {
    const s = scenario();
    const a = s.client(0);
    let second: unknown;
    const run = (async () => {
      const grant: McsGrant = await a.lock.acquire(1, 'exclusive');
      await a.lock.release(grant);
      second = await a.lock.release(grant).catch((error: unknown) => error);
    })();
    await s.scheduler.run();
    await run;
    expect(second).toBeInstanceOf(GrantNotHeldError);
  });

  it('rejects unknown and malformed options with one ConfigError', () => {
    const s = scenario();
    const ports = s.client(0).ports;
    expect(() => mcs.createClient(ports, { pollIntervalNs: 0, nope: 1 })).toThrow(ConfigError);
  });
});
