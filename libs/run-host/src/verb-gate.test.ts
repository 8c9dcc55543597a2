import { createHook } from 'node:async_hooks';
import type { Completion, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { VerbGate } from './verb-gate.js';

const read: WorkRequest = { op: 'read', addr: { node: 0, region: 0, rkey: 1, offset: 0 }, length: 8 };

/** A fabric whose batches complete only when the test says so. */
function heldFabric() {
  const sent: (readonly WorkRequest[])[] = [];
  const pending: (() => void)[] = [];
  const post = (batch: readonly WorkRequest[]) =>
    new Promise<Completion[]>((resolve) => {
      sent.push(batch);
      pending.push(() => resolve(batch.map(() => ({ status: 'ok' as const }))));
    });
  return { sent, post, completeAll: () => pending.splice(0).forEach((complete) => complete()) };
}

describe('VerbGate', () => {
  it('passes verbs until retired; after that the old clients are refused locally, new ones pass', async () => {
    const gate = new VerbGate(2);
    const fabric = heldFabric();
    const old = gate.open(fabric.post);
    const first = old([read]);
    expect(fabric.sent).toHaveLength(1);
    gate.retire('the view of epoch 7 lists compute node 2 incarnation 5 dead');
    const refused = await old([read, read]);
    expect(fabric.sent).toHaveLength(1); // nothing left the node
    expect(refused.map((c) => c.status)).toStrictEqual(['unreachable', 'unreachable']);
    expect(refused[0]?.detail).toMatch(/compute node 2 was declared dead .*epoch 7/);
    // A batch posted before the retire still completes as the fabric says.
    fabric.completeAll();
    expect((await first).map((c) => c.status)).toStrictEqual(['ok']);
    const fresh = gate.open(fabric.post);
    const next = fresh([read]);
    expect(fabric.sent).toHaveLength(2);
    fabric.completeAll();
    expect((await next).map((c) => c.status)).toStrictEqual(['ok']);
  });

  it("replaceRun refuses the earlier run's clients with a reason naming the new run; the new run's pass", async () => {
    const gate = new VerbGate(2);
    const fabric = heldFabric();
    const leftover = gate.open(fabric.post);
    gate.replaceRun('run-7');
    const refused = await leftover([read]);
    expect(fabric.sent).toHaveLength(0);
    expect(refused[0]).toMatchObject({ status: 'unreachable', detail: expect.stringMatching(/run run-7 replaced the run/) as unknown });
    const current = gate.open(fabric.post)([read]);
    expect(fabric.sent).toHaveLength(1);
    fabric.completeAll();
    expect((await current).map((c) => c.status)).toStrictEqual(['ok']);
  });

  it('drain waits for the batches in flight, and reports when they outlast the bound', async () => {
    const gate = new VerbGate(2);
    const fabric = heldFabric();
    const post = gate.open(fabric.post);
    void post([read]);
    void post([read]);
    expect(gate.inflightBatches).toBe(2);
    gate.retire('dead');
    expect(await gate.drain(0)).toBe(false);
    const drained = gate.drain(10_000, 1);
    fabric.completeAll();
    expect(await drained).toBe(true);
    expect(gate.inflightBatches).toBe(0);
  });

  it("an open gate returns the fabric's own promise: no wrapper promise per verb", async () => {
    const gate = new VerbGate(2);
    const fabric = heldFabric();
    const own: Promise<Completion[]>[] = [];
    const post = gate.open((batch) => {
      const promise = fabric.post(batch);
      own.push(promise);
      return promise;
    });
    const returned = post([read]);
    expect(own).toHaveLength(1);
    expect(returned).toBe(own[0]);
    expect(gate.inflightBatches).toBe(1);
    fabric.completeAll();
    await returned;
    await Promise.resolve(); // the in-flight count settles one reaction after the batch
    expect(gate.inflightBatches).toBe(0);
  });

  it('a post that throws leaves nothing counted in flight', async () => {
    const gate = new VerbGate(2);
    const post = gate.open(() => {
      throw new Error('fabric broke');
    });
    await expect(post([read])).rejects.toThrow('fabric broke');
    expect(gate.inflightBatches).toBe(0);
  });
});

/** Promises created synchronously by one call (async_hooks sees every one). */
function promisesMadeBy(call: () => unknown): number {
  let created = 0;
  const hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && created++) });
  hook.enable();
  try {
    call();
  } finally {
    hook.disable();
  }
  return created;
}

/** A fabric that reports each batch's settling, as LiveFabric's post does, and completes when told. */
function settlingFabric() {
  const pending: (() => void)[] = [];
  const post = (batch: readonly WorkRequest[], _options: unknown, settled: () => void) =>
    new Promise<Completion[]>((resolve) => {
      pending.push(() => {
        settled();
        resolve(batch.map(() => ({ status: 'ok' as const })));
      });
    });
  return { post, completeAll: () => pending.splice(0).forEach((complete) => complete()) };
}

describe('VerbGate.openSettling', () => {
  it('adds no promise to a post (open, the old path, adds one: the mutant this count catches)', () => {
    const fabric = settlingFabric();
    const bare = promisesMadeBy(() => fabric.post([read], undefined, () => undefined));
    const settling = new VerbGate(2).openSettling(fabric.post);
    const reacting = new VerbGate(2).open((batch, options) => fabric.post(batch, options, () => undefined));
    // the second call of each: the first one pays for anything created lazily
    for (const post of [settling, reacting]) post([read]);
    expect(promisesMadeBy(() => settling([read])) - bare).toBe(0);
    expect(promisesMadeBy(() => reacting([read])) - bare).toBe(1);
    fabric.completeAll();
  });

  it('counts a batch in flight until the fabric reports it settled, with no reaction in between', async () => {
    const gate = new VerbGate(2);
    const fabric = settlingFabric();
    const post = gate.openSettling(fabric.post);
    const first = post([read]);
    void post([read]);
    expect(gate.inflightBatches).toBe(2);
    gate.retire('dead');
    expect((await post([read]))[0]?.status).toBe('unreachable'); // refused locally, never counted
    expect(gate.inflightBatches).toBe(2);
    const drained = gate.drain(10_000, 1);
    fabric.completeAll();
    expect(gate.inflightBatches).toBe(0);
    expect((await first).map((c) => c.status)).toStrictEqual(['ok']);
    expect(await drained).toBe(true);
  });

  it('a post that throws leaves nothing counted in flight', async () => {
    const gate = new VerbGate(2);
    const post = gate.openSettling(() => {
      throw new Error('fabric broke');
    });
    await expect(post([read])).rejects.toThrow('fabric broke');
    expect(gate.inflightBatches).toBe(0);
  });
});
