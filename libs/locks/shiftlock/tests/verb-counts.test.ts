import { describe, expect, it } from 'vitest';
import { LEAP } from '../src/index.js';
import { RecordingTrace } from './support/recording-trace.js';
import { delta, scripted } from './support/scripted.js';

describe('shiftlock: verbs without contention (spec §3.6, I15)', () => {
  it('reader: one ExtFAA to acquire, one ExtFAA to release, no messages', async () => {
    const trace = new RecordingTrace();
    const s = scripted({}, { trace });
    const reader = s.client(0);
    const pending = s.acquire(reader, 2, 'shared');
    await s.until(pending.settled);
    const acquire = s.verbs();
    await s.run(reader.release(pending.grant!));
    await s.advance(10_000);
    expect(acquire).toEqual({ 'masked-faa': 1 });
    expect(delta(s.verbs(), acquire)).toEqual({ 'masked-faa': 1 });
    expect(s.messages()).toBe(0);
    expect(s.entry(2)).toEqual({ epoch: 0, readers: 0, tail: 0n, relCnt: 1n });
    const span = trace.named('lock.acquire')[0]!;
    expect(span.attributes['lockfabric.verbs']).toBe(1);
    expect(span.attributes['lockfabric.retries']).toBe(0);
    expect(span.attributes['lockfabric.messages']).toBe(0);
  });

  it('writer: one ExtCAS to acquire, one ExtCAS to release; the empty-queue release flips Epoch', async () => {
    const s = scripted();
    const writer = s.client(0);
    const pending = s.acquire(writer, 1, 'exclusive');
    await s.until(pending.settled);
    const acquire = s.verbs();
    expect(s.entry(1).tail).not.toBe(0n);
    await s.run(writer.release(pending.grant!));
    await s.advance(10_000);
    expect(acquire).toEqual({ 'masked-cas': 1 });
    expect(delta(s.verbs(), acquire)).toEqual({ 'masked-cas': 1 });
    expect(s.messages()).toBe(0);
    expect(s.entry(1)).toEqual({ epoch: 1, readers: 0, tail: 0n, relCnt: 1n });
  });

  it('writer with the trivial-CAS flag: still one ExtCAS each way when the lock is free', async () => {
    const s = scripted({ trivialCas: true });
    const writer = s.client(0);
    const pending = s.acquire(writer, 0, 'exclusive');
    await s.until(pending.settled);
    await s.run(writer.release(pending.grant!));
    await s.advance(10_000);
    expect(s.verbs()).toEqual({ 'masked-cas': 2 });
  });
});

describe('shiftlock: verbs with a second client (spec §3.6 table)', () => {
  it('writer behind a writer: ExtCAS + SEND Successor; release is a CAS bump of RelCnt + SEND Handover', async () => {
    const s = scripted();
    const [w1, w2] = [s.client(0), s.client(1)];
    const first = s.acquire(w1, 0, 'exclusive');
    await s.until(first.settled);
    const second = s.acquire(w2, 0, 'exclusive');
    await s.advance(20_000); // W2 enqueued and its Successor message delivered
    expect(second.settled()).toBe(false);
    expect(s.verbs()).toEqual({ 'masked-cas': 2 });
    expect(s.messages()).toBe(1);
    const beforeRelease = s.verbs();
    await s.run(w1.release(first.grant!));
    expect(delta(s.verbs(), beforeRelease)).toEqual({ cas: 1 });
    await s.until(second.settled);
    expect(s.messages()).toBe(2);
    // W2 waited on its mailbox only: no READ was needed to get the lock.
    expect(s.verbs()).toEqual({ 'masked-cas': 2, cas: 1 });
    expect(second.grant).toMatchObject({ role: 'writer', guard: { curRelCnt: 1n, consWrt: 1, epoch: 0 } });
    await s.run(w2.release(second.grant!));
    expect(s.verbs()).toEqual({ 'masked-cas': 3, cas: 1 });
    expect(s.entry(0)).toEqual({ epoch: 1, readers: 0, tail: 0n, relCnt: 2n });
    expect(w1.stats).toMatchObject({ handoversSent: 1, successorsSent: 0 });
    expect(w2.stats).toMatchObject({ handoversSent: 0, successorsSent: 1 });
  });

  it('release before the Successor arrives: one failed ExtCAS, then the RelCnt bump + Handover once it comes', async () => {
    const s = scripted();
    const [w1, w2] = [s.client(0), s.client(1)];
    const first = s.acquire(w1, 0, 'exclusive');
    await s.until(first.settled);
    const second = s.acquire(w2, 0, 'exclusive');
    // W2's enqueue lands ~2 µs after it is posted; its Successor needs 1.5 µs more. Release in between.
    const w1Tail = first.grant!.role === 'writer' ? first.grant!.guard.me : 0n;
    expect(await s.until(() => s.entry(0).tail !== w1Tail)).toBe(true);
    expect(s.messages()).toBe(0);
    const before = s.verbs();
    await s.run(w1.release(first.grant!));
    expect(delta(s.verbs(), before)).toEqual({ 'masked-cas': 1, cas: 1 });
    await s.until(second.settled);
    expect(second.grant?.role).toBe('writer');
    expect(w1.stats).toMatchObject({ handoversSent: 1, droppedLocks: 0 });
  });

  it('reader behind a writer: ExtFAA, then READ polls until the writer flips Epoch', async () => {
    const s = scripted({ pollIntervalNs: 2_000 });
    const [writer, reader] = [s.client(0), s.client(1)];
    const w = s.acquire(writer, 0, 'exclusive');
    await s.until(w.settled);
    const r = s.acquire(reader, 0, 'shared');
    await s.advance(20_000);
    const polled = s.verbs().read ?? 0;
    expect(polled).toBeGreaterThanOrEqual(3);
    expect(s.entry(0)).toMatchObject({ epoch: 0, readers: 1 });
    await s.run(writer.release(w.grant!));
    await s.until(r.settled);
    expect(s.verbs()).toEqual({ 'masked-cas': 2, 'masked-faa': 1, read: (s.verbs().read ?? 0) });
    expect(s.entry(0)).toMatchObject({ epoch: 1, readers: 1, tail: 0n, relCnt: 1n });
    await s.run(reader.release(r.grant!));
    expect(s.entry(0)).toEqual({ epoch: 1, readers: 0, tail: 0n, relCnt: 2n });
  });

  it('writer behind readers: ExtCAS, then READs of RelCnt until RelCnt₀ + RdrCnt₀', async () => {
    const s = scripted();
    const [r1, r2, writer] = [s.client(0), s.client(1), s.client(2)];
    const a = s.acquire(r1, 0, 'shared');
    const b = s.acquire(r2, 0, 'shared');
    await s.until(() => a.settled() && b.settled());
    const w = s.acquire(writer, 0, 'exclusive');
    await s.advance(10_000);
    expect(w.settled()).toBe(false);
    await s.run(r1.release(a.grant!));
    await s.advance(10_000);
    expect(w.settled()).toBe(false);
    await s.run(r2.release(b.grant!));
    await s.until(w.settled);
    expect(w.grant).toMatchObject({ role: 'writer', guard: { curRelCnt: 2n, consWrt: 0 } });
    const verbs = s.verbs();
    expect({ ...verbs, read: undefined }).toEqual({ 'masked-faa': 4, 'masked-cas': 1, read: undefined });
    expect(verbs.read).toBeGreaterThan(0);
  });

  it.each([
    ['one compare-guarded ExtCAS (default)', true, 'masked-cas'],
    ["the paper's one ExtFAA", false, 'masked-faa'],
  ] as const)('transfer to readers (N = 1): %s flips Epoch and counts the release; ModeChanged carries x', async (_name, hardenedTransfer, verb) => {
    const s = scripted({ consecutiveWriters: 1, hardenedTransfer });
    const [w1, w2] = [s.client(0), s.client(1)];
    const first = s.acquire(w1, 0, 'exclusive');
    await s.until(first.settled);
    const second = s.acquire(w2, 0, 'exclusive');
    await s.advance(20_000);
    const before = s.verbs();
    await s.run(w1.release(first.grant!));
    expect(delta(s.verbs(), before)).toEqual({ [verb]: 1 });
    expect(s.entry(0)).toMatchObject({ epoch: 1, relCnt: 1n });
    await s.until(second.settled);
    expect(w1.stats.modeChangesSent).toBe(1);
    expect(second.grant).toMatchObject({ guard: { curRelCnt: 1n, consWrt: 0, epoch: 1 } });
  });
});

describe('shiftlock: verb counts are per lock entry', () => {
  it('touches only the lock entry (16-byte stride) and nothing else on the memory node', async () => {
    const s = scripted();
    const reader = s.client(0);
    const pending = s.acquire(reader, 3, 'shared');
    await s.until(pending.settled);
    await s.run(reader.release(pending.grant!));
    for (const lock of [0, 1, 2]) expect(s.entry(lock)).toEqual({ epoch: 0, readers: 0, tail: 0n, relCnt: 0n });
    expect(s.entry(3).relCnt).toBe(1n);
    expect(LEAP).toBe(1n << 63n);
  });
});
