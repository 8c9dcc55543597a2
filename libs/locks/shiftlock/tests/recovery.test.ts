import { LeaseExpiredError, LockTimeoutError, NS_PER_MS, lockAddress } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { LEAP } from '../src/index.js';
import type { ShiftLockClient } from '../src/index.js';
import { scripted } from './support/scripted.js';

const LEASE_MS = 0.1;
const LEASE_NS = LEASE_MS * NS_PER_MS;

function eraOf(s: ReturnType<typeof scripted>, client: ShiftLockClient, lock: number): bigint {
  return s.memory.cpuLoad(client.recoverer.eraAddress(lockAddress(s.cluster.layout, lock)));
}

describe('failure detection and era-fenced recovery through the memory node (spec §4)', () => {
  it('a writer dies holding: after 3·T_lease without a release the server resets the lock once; every waiter restarts and gets it', async () => {
    const s = scripted({ leaseNs: LEASE_NS }, { recoveryServer: true });
    const [dead, w2, w3, r1] = [s.client(0), s.client(1), s.client(2), s.client(10)];
    const held = s.acquire(dead, 0, 'exclusive');
    await s.until(held.settled);
    const crashNs = s.scheduler.nowNs();
    const waiters = [s.acquire(w2, 0, 'exclusive'), s.acquire(w3, 0, 'exclusive'), s.acquire(r1, 0, 'shared')];
    await s.advance(2 * LEASE_NS);
    expect(waiters.some((p) => p.settled())).toBe(false);
    expect(await s.until(() => waiters.some((p) => p.settled()), 20 * LEASE_NS)).toBe(true);
    const server = s.server!;
    expect(server.stats.accepted).toBe(1);
    const reset = server.stats.resets[0]!;
    expect(reset).toMatchObject({ lock: 0, era: 1n, relCnt: 0n });
    expect(eraOf(s, w2, 0)).toBe(1n);
    expect(s.scheduler.nowNs() - crashNs).toBeGreaterThanOrEqual(3 * LEASE_NS);
    // Let everyone through; the lock ends consistent, RelCnt counted from the leap.
    expect(await s.drive(waiters.map((pending, i) => ({ pending, client: [w2, w3, r1][i]! })))).toBe(true);
    expect(s.entry(0)).toEqual({ epoch: expect.any(Number), readers: 0, tail: 0n, relCnt: LEAP + 3n });
    expect(w2.stats.restarts + w3.stats.restarts + r1.stats.restarts).toBe(3);
    // More than one waiter asked; the era let exactly one request through.
    expect(server.stats.rejected + server.stats.accepted).toBeGreaterThanOrEqual(1);
    await s.stop();
  });

  it('a reader dies holding: the head writer waits on RelCnt, stalls, and the reset lets it and the blocked reader in', async () => {
    const s = scripted({ leaseNs: LEASE_NS }, { recoveryServer: true });
    const [dead, writer, reader] = [s.client(10), s.client(0), s.client(11)];
    const held = s.acquire(dead, 0, 'shared');
    await s.until(held.settled);
    const w = s.acquire(writer, 0, 'exclusive');
    await s.advance(10_000);
    const r = s.acquire(reader, 0, 'shared');
    expect(await s.drive([{ pending: w, client: writer }, { pending: r, client: reader }], 20 * LEASE_NS)).toBe(true);
    expect(s.server!.stats.accepted).toBe(1);
    expect(s.entry(0)).toMatchObject({ readers: 0, tail: 0n, relCnt: LEAP + 2n });
    await s.stop();
  });

  it('the server fences stale requests: an old era, or a RelCnt that moved, is rejected', async () => {
    const s = scripted({ leaseNs: LEASE_NS }, { recoveryServer: true });
    const server = s.server!;
    expect(await s.run(server.handle({ lock: 1, era: 0n, relCnt: 0n }))).toBe('accepted');
    expect(s.entry(1)).toEqual({ epoch: 0, readers: 0, tail: 0n, relCnt: LEAP });
    // A recoverer that read era 0 and was preempted across that reset:
    expect(await s.run(server.handle({ lock: 1, era: 0n, relCnt: 0n }))).toBe('stale-era');
    // Current era, but the lock has progressed since the observation:
    expect(await s.run(server.handle({ lock: 1, era: 1n, relCnt: 0n }))).toBe('progress');
    // Same era bucket (default 1 bucket): the failed attempt above still moved the era.
    expect(await s.run(server.handle({ lock: 1, era: 2n, relCnt: LEAP }))).toBe('accepted');
    expect(s.entry(1).relCnt).toBe(0n);
    expect(server.stats).toMatchObject({ accepted: 2, rejected: 2 });
    await s.stop();
  });

  it('with several era buckets, locks in different buckets keep separate eras', async () => {
    const s = scripted({ eraBuckets: 8 }, { recoveryServer: true, lockCount: 16 });
    const client = s.client(0);
    const server = s.server!;
    const bucketOf = (lock: number) => client.recoverer.eraAddress(lockAddress(s.cluster.layout, lock)).offset;
    const a = 0;
    const b = Array.from({ length: 16 }, (_, i) => i).find((lock) => bucketOf(lock) !== bucketOf(a))!;
    expect(await s.run(server.handle({ lock: a, era: 0n, relCnt: 0n }))).toBe('accepted');
    expect(await s.run(server.handle({ lock: b, era: 0n, relCnt: 0n }))).toBe('accepted');
    expect([eraOf(s, client, a), eraOf(s, client, b)]).toEqual([1n, 1n]);
    await s.stop();
  });

  it('one-sided mode (no server): the waiter CASes the era forward and resets the entry itself', async () => {
    const s = scripted({ leaseNs: LEASE_NS, recovery: 'one-sided' });
    const [dead, waiter] = [s.client(0), s.client(1)];
    const held = s.acquire(dead, 0, 'exclusive');
    await s.until(held.settled);
    const w = s.acquire(waiter, 0, 'exclusive');
    expect(await s.until(w.settled, 20 * LEASE_NS)).toBe(true);
    expect(waiter.recoverer.stats).toEqual({ attempts: 1, accepted: 1 });
    expect(eraOf(s, waiter, 0)).toBe(1n);
    expect(s.entry(0).relCnt).toBe(LEAP);
  });

  it('server mode with no server running: nothing resets the lock; the waiter fails with its own typed timeout', async () => {
    const s = scripted({ leaseNs: LEASE_NS });
    const [dead, waiter] = [s.client(0), s.client(1)];
    const held = s.acquire(dead, 0, 'exclusive');
    await s.until(held.settled);
    const w = s.acquire(waiter, 0, 'exclusive', { timeoutMs: 1 });
    expect(await s.until(w.settled, 5 * NS_PER_MS)).toBe(true);
    expect(w.error).toBeInstanceOf(LockTimeoutError);
    expect(waiter.recoverer.stats.attempts).toBeGreaterThan(0);
    expect(waiter.recoverer.stats.accepted).toBe(0);
    expect(s.entry(0).relCnt).toBe(0n);
  });

  it('recovery off: detection does nothing', async () => {
    const s = scripted({ leaseNs: LEASE_NS, recovery: 'off' });
    const [dead, waiter] = [s.client(0), s.client(1)];
    const held = s.acquire(dead, 0, 'exclusive');
    await s.until(held.settled);
    const w = s.acquire(waiter, 0, 'shared');
    expect(await s.until(w.settled, 20 * LEASE_NS)).toBe(false);
    expect(waiter.recoverer.stats.attempts).toBe(0);
  });
});

describe('leases (spec §4.1, A11)', () => {
  it('a writer that overran its lease and was reset meanwhile gets LeaseExpiredError on release and touches nothing', async () => {
    const s = scripted({ leaseNs: LEASE_NS }, { recoveryServer: true });
    const [slow, other] = [s.client(0), s.client(1)];
    const held = s.acquire(slow, 0, 'exclusive');
    await s.until(held.settled);
    expect(held.grant!.leaseEndNs - held.grant!.acquiredNs).toBeCloseTo(LEASE_NS * (1 - 1e-4), 3);
    const w = s.acquire(other, 0, 'exclusive');
    expect(await s.until(w.settled, 20 * LEASE_NS)).toBe(true);
    const before = s.entry(0);
    await expect(s.run(slow.release(held.grant!))).rejects.toBeInstanceOf(LeaseExpiredError);
    expect(s.entry(0)).toEqual(before);
    await s.run(other.release(w.grant!));
    expect(s.entry(0)).toMatchObject({ readers: 0, tail: 0n });
    await s.stop();
  });

  it('a reader that overran its lease across a reset does not decrement the new RdrCnt', async () => {
    const s = scripted({ leaseNs: LEASE_NS }, { recoveryServer: true });
    const [slow, writer, reader] = [s.client(10), s.client(0), s.client(11)];
    const held = s.acquire(slow, 0, 'shared');
    await s.until(held.settled);
    const w = s.acquire(writer, 0, 'exclusive');
    expect(await s.until(w.settled, 20 * LEASE_NS)).toBe(true);
    await s.run(writer.release(w.grant!));
    const r = s.acquire(reader, 0, 'shared');
    await s.until(r.settled);
    await expect(s.run(slow.release(held.grant!))).rejects.toBeInstanceOf(LeaseExpiredError);
    expect(s.entry(0).readers).toBe(1);
    await s.run(reader.release(r.grant!));
    expect(s.entry(0).readers).toBe(0);
    await s.stop();
  });

  it('a release within the lease needs no extra verb', async () => {
    const s = scripted({ leaseNs: LEASE_NS });
    const w = s.client(0);
    const held = s.acquire(w, 0, 'exclusive');
    await s.until(held.settled);
    await s.run(w.release(held.grant!));
    expect(s.verbs()).toEqual({ 'masked-cas': 2 });
  });
});

/** How a release ended: 'released' or the error it threw. */
function outcomeOf(release: Promise<void>): Promise<unknown> {
  return release.then(
    () => 'released',
    (error: unknown) => error,
  );
}

/**
 * W1 holds lock 0 with W2 queued behind it (its Successor in W1's mailbox) when a misbehaving
 * detector resets the lock within W1's lease; then W1 releases. W2 sees the leap (in a ModeChanged
 * from before the reset, or on its next RelCnt look) and re-enqueues.
 */
async function resetUnderHolder(options: Parameters<typeof scripted>[0]) {
  const s = scripted(options, { recoveryServer: true });
  const [w1, w2] = [s.client(0), s.client(1)];
  const first = s.acquire(w1, 0, 'exclusive');
  await s.until(first.settled);
  const second = s.acquire(w2, 0, 'exclusive');
  await s.advance(20_000);
  expect(await s.run(s.server!.handle({ lock: 0, era: 0n, relCnt: 0n }))).toBe('accepted');
  const afterReset = s.entry(0);
  const outcome = await outcomeOf(s.run(w1.release(first.grant!)));
  const after = s.entry(0);
  expect(await s.until(second.settled, 20 * NS_PER_MS)).toBe(true);
  expect(w2.stats.restarts).toBe(1);
  return { s, afterReset, outcome, after, w1 };
}

describe('hardened transfer (A3): refuses to flip a lock reset under its holder', () => {
  it('default ExtFAA: flips Epoch and bumps RelCnt of the reset lock and sends ModeChanged', async () => {
    const { afterReset, outcome, after, w1 } = await resetUnderHolder({ consecutiveWriters: 1, hardenedTransfer: false });
    expect(outcome).toBe('released');
    expect(afterReset).toEqual({ epoch: 0, readers: 0, tail: 0n, relCnt: LEAP });
    expect(after).toEqual({ epoch: 1, readers: 0, tail: 0n, relCnt: LEAP + 1n });
    expect(w1.stats.modeChangesSent).toBe(1);
  });

  it('hardened ExtCAS: the compare fails, nothing changes, the holder learns its lease was lost', async () => {
    const { afterReset, outcome, after, w1 } = await resetUnderHolder({ consecutiveWriters: 1, hardenedTransfer: true });
    expect(outcome).toBeInstanceOf(LeaseExpiredError);
    expect(after).toEqual(afterReset);
    expect(w1.stats.modeChangesSent).toBe(0);
  });
});

describe('a writer that finds the lock reset under it at release touches nothing and learns it', () => {
  it('handover: the RelCnt bump is a CAS from cur_rel; it fails, no Handover goes out, the waiter restarts', async () => {
    const { afterReset, outcome, after, w1 } = await resetUnderHolder({});
    expect(outcome).toBeInstanceOf(LeaseExpiredError);
    // The paper's blind FAA would have bumped the reset lock's RelCnt and handed W2 a grant from before the reset.
    expect(after).toEqual(afterReset);
    expect(w1.stats.handoversSent).toBe(0);
  });

  it('empty queue: the release CAS finds a leapt RelCnt and reports at once instead of waiting for a Successor', async () => {
    const s = scripted({}, { recoveryServer: true });
    const w1 = s.client(0);
    const first = s.acquire(w1, 0, 'exclusive');
    await s.until(first.settled);
    expect(await s.run(s.server!.handle({ lock: 0, era: 0n, relCnt: 0n }))).toBe('accepted');
    const startNs = s.scheduler.nowNs();
    const outcome = await outcomeOf(s.run(w1.release(first.grant!)));
    expect(outcome).toBeInstanceOf(LeaseExpiredError);
    expect(w1.stats.droppedLocks).toBe(0);
    // One CAS round trip, not a lease spent waiting for a Successor that no one will send.
    expect(s.scheduler.nowNs() - startNs).toBeLessThan(LEASE_NS);
  });
});
