import { LockAbortedError, LockTimeoutError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { scripted } from './support/scripted.js';

describe('acquire deadlines and aborts: typed errors at once, the queue position passed on unattended', () => {
  it('a queued writer that times out gets LockTimeoutError; its place in the queue hands the lock on with no hold', async () => {
    const s = scripted();
    const [holder, impatient, next] = [s.client(0), s.client(1), s.client(2)];
    const held = s.acquire(holder, 0, 'exclusive');
    await s.until(held.settled);
    const gaveUp = s.acquire(impatient, 0, 'exclusive', { timeoutMs: 0.01 });
    await s.advance(5_000);
    const behind = s.acquire(next, 0, 'exclusive');
    await s.until(gaveUp.settled);
    expect(gaveUp.error).toBeInstanceOf(LockTimeoutError);
    expect(impatient.stats.abandoned).toBe(1);
    await s.advance(20_000);
    expect(behind.settled()).toBe(false);
    await s.run(holder.release(held.grant!));
    // The abandoned attempt receives the Handover and at once hands over to the writer behind it.
    expect(await s.until(behind.settled)).toBe(true);
    expect(impatient.stats.handoversSent).toBe(1);
    await s.run(next.release(behind.grant!));
    expect(s.entry(0)).toEqual({ epoch: 1, readers: 0, tail: 0n, relCnt: 3n });
  });

  it('a waiting reader aborted by its signal gets LockAbortedError; it still counts, and releases once admitted', async () => {
    const s = scripted();
    const [writer, reader] = [s.client(0), s.client(1)];
    const held = s.acquire(writer, 0, 'exclusive');
    await s.until(held.settled);
    const controller = new AbortController();
    const waiting = s.acquire(reader, 0, 'shared', { signal: controller.signal });
    await s.advance(5_000);
    controller.abort('caller went away');
    await s.until(waiting.settled);
    expect(waiting.error).toBeInstanceOf(LockAbortedError);
    expect((waiting.error as LockAbortedError).reason).toBe('caller went away');
    expect(s.entry(0).readers).toBe(1);
    await s.run(writer.release(held.grant!));
    await s.advance(20_000);
    expect(s.entry(0)).toEqual({ epoch: 1, readers: 0, tail: 0n, relCnt: 2n });
  });

  it('an acquire whose deadline has already passed fails before any verb', async () => {
    const s = scripted();
    const client = s.client(0);
    const pending = s.acquire(client, 0, 'exclusive', { timeoutMs: 0 });
    await s.until(pending.settled);
    expect(pending.error).toBeInstanceOf(LockTimeoutError);
    expect(s.verbs()).toEqual({});
  });

  it('a client out of endpoints (K = 1, one still occupied by an abandoned attempt) refuses further writer acquires with a typed error', async () => {
    const s = scripted({ endpoints: 1 });
    const [holder, client] = [s.client(0), s.client(1)];
    const held = s.acquire(holder, 0, 'exclusive');
    await s.until(held.settled);
    const abandoned = s.acquire(client, 0, 'exclusive', { timeoutMs: 0.01 });
    await s.until(abandoned.settled);
    const refused = s.acquire(client, 1, 'exclusive');
    await s.until(refused.settled);
    expect(refused.error).toBeInstanceOf(LockAbortedError);
    expect(String((refused.error as Error).message)).toMatch(/endpoints/);
    // Readers need no endpoint.
    const reader = s.acquire(client, 1, 'shared');
    expect(await s.until(reader.settled)).toBe(true);
    expect(reader.grant?.role).toBe('reader');
    // Once the abandoned attempt has passed the lock on, the endpoint is free again.
    await s.run(holder.release(held.grant!));
    await s.advance(20_000);
    const again = s.acquire(client, 2, 'exclusive');
    expect(await s.until(again.settled)).toBe(true);
    expect(again.grant?.role).toBe('writer');
  });
});
