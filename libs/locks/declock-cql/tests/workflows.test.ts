import { describe, expect, it } from 'vitest';
import type { CqlGrant, FlatCqlClient } from '../src/index.js';
import { declockCql } from '../src/index.js';
import { delta, scriptedCluster } from '@lockfabric/lock-declock/testing';

/** The five workflows of paper Fig. 6, with their exact memory-node verbs and messages. */
describe('declock-cql: verbs and messages per workflow (Fig. 6, spec §2.6)', () => {
  it('➀ uncontended acquire: 1 FAA; ➂ release to an empty queue: FAA + READ in one doorbell, no message', async () => {
    const s = scriptedCluster(declockCql);
    const a = s.client(0, 0) as FlatCqlClient;
    const counts = await s.run(async () => {
      const v0 = s.verbs();
      const grant = await a.acquire(1, 'exclusive');
      const v1 = s.verbs();
      const d1 = s.doorbells();
      await a.release(grant);
      return { acquire: delta(v1, v0), release: delta(s.verbs(), v1), releaseDoorbells: s.doorbells() - d1 };
    });
    expect(counts).toEqual({ acquire: { faa: 1 }, release: { faa: 1, read: 1 }, releaseDoorbells: 1 });
    expect(s.messages()).toBe(0);
    expect(s.headerOf(1)).toEqual({ epoch: 0, qhead: 1, qsize: 0, wcnt: 0, resetId: 0 });
  });

  it('the same for a reader, and reader→reader releases send nothing', async () => {
    const s = scriptedCluster(declockCql);
    const [a, b] = [s.client(0, 0), s.client(1, 1)];
    const counts = await s.run(async () => {
      const v0 = s.verbs();
      const ga = await a.acquire(0, 'shared');
      const gb = await b.acquire(0, 'shared'); // w = 0: granted at once although s = 1
      const v1 = s.verbs();
      await a.release(ga);
      await b.release(gb);
      return { acquire: delta(v1, v0), release: delta(s.verbs(), v1) };
    });
    expect(counts).toEqual({ acquire: { faa: 2 }, release: { faa: 2, read: 2 } });
    expect(s.messages()).toBe(0);
  });

  it('➁ a waiter: FAA + one WRITE of its entry, then one grant message; ➃ release to a writer: FAA + READ and 1 message', async () => {
    const s = scriptedCluster(declockCql);
    const [a, b] = [s.client(0, 0), s.client(1, 1)];
    const counts = await s.run(async () => {
      const ga = await a.acquire(2, 'exclusive');
      const v0 = s.verbs();
      const pending = b.acquire(2, 'exclusive');
      await s.sleep(20_000); // b has enqueued and written its entry
      const afterWait = delta(s.verbs(), v0);
      const entry = s.entryOf(2, 1);
      const v1 = s.verbs();
      await a.release(ga);
      const gb = await pending;
      const release = delta(s.verbs(), v1);
      await b.release(gb);
      return { afterWait, entry, release };
    });
    expect(counts.afterWait).toEqual({ faa: 1, write: 1 });
    expect(counts.entry).toEqual({ version: 0, ts: 0, mode: 'exclusive', client: { node: 2, client: 1 } });
    expect(counts.release).toEqual({ faa: 1, read: 1 }); // no verb between the WRITE and the grant (I4)
    expect(s.messages()).toBe(1);
    expect(s.headerOf(2)).toMatchObject({ qhead: 2, qsize: 0, wcnt: 0 });
  });

  it('➄ a writer releasing to a run of k readers sends k messages and stops at the next writer', async () => {
    const s = scriptedCluster(declockCql, { computeNodes: 3 });
    const w = s.client(0, 0);
    const readers = [s.client(1, 1), s.client(2, 2), s.client(1, 3)];
    const w2 = s.client(2, 4);
    const result = await s.run(async () => {
      const gw = await w.acquire(0, 'exclusive');
      const pendingReaders = readers.map((r) => r.acquire(0, 'shared'));
      await s.sleep(10_000);
      const pendingWriter = w2.acquire(0, 'exclusive');
      await s.sleep(10_000);
      const lateReader = s.client(0, 5).acquire(0, 'shared'); // behind w2: must not overtake it
      await s.sleep(10_000);
      const m0 = s.messages();
      await w.release(gw);
      const grants = await Promise.all(pendingReaders);
      await s.sleep(5_000);
      const afterBatch = s.messages() - m0;
      for (const g of grants.slice(0, 2)) await readers[grants.indexOf(g)]!.release(g);
      const m1 = s.messages();
      await readers[2]!.release(grants[2]!); // the last reader hands over to w2: one message
      const gw2 = await pendingWriter;
      const toWriter = s.messages() - m1;
      let lateGranted = false;
      void lateReader.then(() => (lateGranted = true));
      await s.sleep(5_000);
      const lateBeforeWriterRelease = lateGranted;
      await w2.release(gw2);
      await readers[0]!.release(await lateReader);
      return { afterBatch, toWriter, lateBeforeWriterRelease };
    });
    expect(result).toEqual({ afterBatch: 3, toWriter: 1, lateBeforeWriterRelease: false });
    expect(s.headerOf(0)).toMatchObject({ qhead: 6, qsize: 0, wcnt: 0 });
  });

  it('a releasing reader whose successor slot is a shared holder (obsolete) finds the writer behind it (Fig. 8 right)', async () => {
    const s = scriptedCluster(declockCql);
    const [r1, r2, w] = [s.client(0, 0), s.client(1, 1), s.client(0, 2)];
    const result = await s.run(async () => {
      const g1 = await r1.acquire(3, 'shared'); // position 0, no entry
      const g2 = await r2.acquire(3, 'shared'); // position 1, no entry
      const pending = w.acquire(3, 'exclusive'); // position 2, waits
      await s.sleep(10_000);
      const m0 = s.messages();
      await r2.release(g2); // successor = position 1: obsolete (a holder); w is located, and it is not next
      const afterFirst = s.messages() - m0;
      await r1.release(g1); // successor = position 2: the writer
      const gw = await pending;
      await w.release(gw);
      return { afterFirst, total: s.messages() - m0, extraReads: (r2 as FlatCqlClient).stats.extraReads };
    });
    expect(result).toEqual({ afterFirst: 0, total: 1, extraReads: 0 });
  });

  it('a read–write race (entry not yet written when the releaser reads) costs one extra READ (Fig. 8 left)', async () => {
    const s = scriptedCluster(declockCql);
    const [a, b] = [s.client(0, 0) as FlatCqlClient, s.client(1, 1)];
    const result = await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const pending = b.acquire(0, 'exclusive');
      // b's FAA lands after ~1 µs and its WRITE after ~3 µs: release in between.
      await s.sleep(1_200);
      const v0 = s.verbs();
      await a.release(ga);
      const gb = await pending;
      const release = delta(s.verbs(), v0);
      await b.release(gb);
      return { release, extraReads: a.stats.extraReads };
    });
    expect(result.extraReads).toBe(1);
    // a: FAA + READ + one refetch READ; b (in flight meanwhile): FAA + entry WRITE.
    expect(result.release).toEqual({ faa: 2, read: 2, write: 1 });
  });
});

describe('declock-cql: lock resets (§4.4)', () => {
  it('version wrap detected by the releaser: the lock restarts in the next epoch with every entry reset', async () => {
    const s = scriptedCluster(declockCql);
    const a = s.client(0, 0);
    s.setHeader(0, { epoch: 0, qhead: 0xffff * 8 - 1, qsize: 0, wcnt: 0, resetId: 0 });
    const result = await s.run(async () => {
      const g = await a.acquire(0, 'exclusive'); // position in lap 0xFFFE: fine
      const v0 = s.verbs();
      await a.release(g); // the head reaches lap 0xFFFF
      return delta(s.verbs(), v0);
    });
    // FAA + READ, then the reset: claim CAS, READ of the queue (notify), WRITE of the queue, CAS of the header.
    expect(result).toEqual({ faa: 1, read: 2, cas: 2, write: 1 });
    expect(s.headerOf(0)).toEqual({ epoch: 1, qhead: 0, qsize: 0, wcnt: 0, resetId: 0 });
    for (let slot = 0; slot < 8; slot++) expect(s.rawEntry(0, slot)).toBe(0n);
    expect(s.spans.filter((sp) => sp.name === 'lock.reset').map((sp) => sp.attributes['declock.reset.reason'])).toEqual(['version-wrap']);
  });

  it('version wrap detected by the acquirer: it resets instead of writing an entry that reads as never written', async () => {
    const s = scriptedCluster(declockCql);
    const [a, b] = [s.client(0, 0), s.client(1, 1)];
    s.setHeader(0, { epoch: 0, qhead: 0xffff * 8 - 1, qsize: 0, wcnt: 0, resetId: 0 });
    const result = await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const pending = b.acquire(0, 'exclusive'); // would wait in lap 0xFFFF
      await s.sleep(20_000);
      const midReset = s.headerOf(0);
      await a.release(ga); // void: the reset id is set; this FAA is a's acknowledgement
      const gb = await pending; // b retries in the new epoch
      await b.release(gb);
      return { midReset };
    });
    expect(result.midReset.resetId).toBe(3); // node 2 + 1
    expect(s.headerOf(0)).toEqual({ epoch: 1, qhead: 1, qsize: 0, wcnt: 0, resetId: 0 });
    expect(s.spans.filter((sp) => sp.name === 'lock.reset').map((sp) => sp.attributes['declock.reset.reason'])).toEqual(['version-wrap']);
  });

  it('queue overflow (s ≥ C) is caught by the acquirer before it writes, and everybody gets the lock after the reset', async () => {
    const s = scriptedCluster(declockCql, { capacity: 2 });
    const clients = [0, 1, 2].map((i) => s.client(i % 2, i, { allowQueueOverflow: true }));
    const order: number[] = [];
    await s.run(async () => {
      const g0 = await clients[0]!.acquire(0, 'exclusive');
      const p1 = clients[1]!.acquire(0, 'exclusive');
      await s.sleep(10_000);
      const p2 = clients[2]!.acquire(0, 'exclusive'); // sees s = 2 = C
      await s.sleep(10_000);
      await clients[0]!.release(g0);
      await Promise.all(
        [p1, p2].map(async (p, i) => {
          const g = await p;
          order.push(i + 1);
          await s.sleep(1_000);
          await clients[i + 1]!.release(g);
        }),
      );
    });
    expect(order.sort()).toEqual([1, 2]);
    expect(s.spans.filter((sp) => sp.name === 'lock.reset').map((sp) => sp.attributes['declock.reset.reason'])).toEqual(['queue-overflow']);
    expect(s.headerOf(0)).toMatchObject({ epoch: 1, qsize: 0, wcnt: 0, resetId: 0 });
  });

  it('paper-literal lazy overflow: a waiter overwrites a live entry and only the releaser notices; the proactive check resets first', async () => {
    const scenario = async (paperLiteralLazyOverflow: boolean) => {
      const s = scriptedCluster(declockCql, { capacity: 4, computeNodes: 3 });
      const clients = [0, 1, 2, 3, 4, 5].map((i) => s.client(i % 3, i, { allowQueueOverflow: true, paperLiteralLazyOverflow }));
      let firstSlotAfterSixth: number | undefined;
      await s.run(async () => {
        const g0 = await clients[0]!.acquire(0, 'exclusive'); // position 0 holds
        const pending = [];
        for (let i = 1; i <= 5; i++) {
          pending.push(clients[i]!.acquire(0, 'exclusive').then((g) => s.sleep(1_000).then(() => clients[i]!.release(g))));
          await s.sleep(10_000); // positions 1…5, one after the other
        }
        firstSlotAfterSixth = s.entryOf(0, 1).client.client; // slot 1: position 1's entry, or position 5's
        await clients[0]!.release(g0);
        await Promise.all(pending);
      });
      return { slot1Owner: firstSlotAfterSixth, resets: s.spans.filter((sp) => sp.name === 'lock.reset').map((sp) => sp.attributes['declock.reset.reason']) };
    };
    // Paper-literal: position 5 wrote slot 1 (lap 1) over the live waiter at position 1; its releaser finds it.
    expect(await scenario(true)).toEqual({ slot1Owner: 5, resets: ['entry-overwritten'] });
    // Spec: position 4 sees s = C and resets before anyone writes into a live slot.
    expect(await scenario(false)).toMatchObject({ slot1Owner: 1, resets: ['queue-overflow'] });
  });

  it('refuses more contenders than C unless overflow is allowed, and never more than 2C − 1', async () => {
    const s = scriptedCluster(declockCql, { capacity: 2 });
    s.client(0, 0);
    s.client(1, 1);
    expect(() => s.client(0, 2)).toThrow(/3 clients can contend for one lock but capacity 2 allows 2/);
    s.client(0, 2, { allowQueueOverflow: true });
    expect(() => s.client(1, 3, { allowQueueOverflow: true })).toThrow(/allows 3/);
  });
});

describe('declock-cql: handover spans', () => {
  it('the releaser starts lock.handover, sends its context in the grant, and the next holder links its acquire to it', async () => {
    const s = scriptedCluster(declockCql);
    const [a, b] = [s.client(0, 0), s.client(1, 1)];
    await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const pending = b.acquire(0, 'shared');
      await s.sleep(10_000);
      await a.release(ga);
      await b.release(await pending);
    });
    const handover = s.spans.find((sp) => sp.name === 'lock.handover');
    const acquires = s.spans.filter((sp) => sp.name === 'lock.acquire');
    expect(handover?.attributes['declock.handover.to']).toBe('2/1');
    expect(acquires[1]?.links).toEqual([handover?.context]);
    // The next holder records a lock.grant whose parent is the releaser's handover span.
    const grant = s.spans.find((sp) => sp.name === 'lock.grant');
    expect(grant?.parent).toEqual(handover?.context);
    expect(grant?.attributes['lockfabric.client']).toBe('2/1');
    expect(acquires[1]?.attributes['lockfabric.verbs']).toBe(2);
    expect(acquires[0]?.attributes['lockfabric.verbs']).toBe(1);
  });
});

describe('declock-cql: callers that give up', () => {
  it('a timed-out waiter keeps its place; its grant is taken and released in the background', async () => {
    const s = scriptedCluster(declockCql);
    const [a, b, c] = [s.client(0, 0), s.client(1, 1), s.client(0, 2)];
    const result = await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const failed = await b.acquire(0, 'exclusive', { timeoutMs: 0.01 }).catch((e: Error) => e.name);
      const pending = c.acquire(0, 'exclusive');
      await s.sleep(10_000);
      await a.release(ga); // grants b's abandoned place; b releases it at once, to c
      const gc: CqlGrant = (await pending) as CqlGrant;
      await c.release(gc);
      return { failed };
    });
    expect(result.failed).toBe('LockTimeoutError');
    expect(s.headerOf(0)).toMatchObject({ qhead: 3, qsize: 0, epoch: 0 });
    expect(s.spans.some((sp) => sp.name === 'lock.reset')).toBe(false);
  });
});
