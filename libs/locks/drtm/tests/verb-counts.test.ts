import { ConfigError, LeaseExpiredError, LockTimeoutError } from '@lockfabric/ports';
import type { Verbs } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { drtm, leaseEndNs, leaseWord, writeLockedWord } from '../src/index.js';
import type { DrtmClient, DrtmGrant } from '../src/index.js';
import { diff, scenario } from './scenario.js';

describe('drtm: verbs without contention', () => {
  it('writer: one CAS to acquire, one CAS to release; the word holds W and the owner machine meanwhile', async () => {
    const s = scenario();
    const a = s.client(0);
    let afterAcquire = {};
    let held = 0n;
    const run = (async () => {
      const grant = await a.lock.acquire(3, 'exclusive');
      afterAcquire = s.verbs();
      held = s.word(3);
      await a.lock.release(grant);
    })();
    await s.scheduler.run();
    await run;
    expect(afterAcquire).toEqual({ cas: 1 });
    expect(diff(s.verbs(), afterAcquire)).toEqual({ cas: 1 });
    expect(held).toBe(writeLockedWord(a.ports.self.node, a.ports.self.client));
    expect(s.word(3)).toBe(0n);
  });

  it('reader: one CAS installs a lease of leaseNs from now; release costs nothing and leaves the lease', async () => {
    const s = scenario();
    const a = s.client(0);
    let startNs = 0;
    const run = (async () => {
      startNs = s.now();
      await a.lock.release(await a.lock.acquire(3, 'shared'));
    })();
    await s.scheduler.run();
    await run;
    expect(s.verbs()).toEqual({ cas: 1 });
    expect(s.word(3)).toBe(leaseWord(startNs + 1_000_000));
  });

  it('a second reader shares a lease with enough left: one (failed) CAS, no write', async () => {
    const s = scenario();
    const [a, b] = [s.client(0), s.client(1)];
    let lease = 0n;
    let bVerbs = {};
    const run = (async () => {
      await a.lock.acquire(2, 'shared');
      lease = s.word(2);
      const before = s.verbs();
      const grant = await b.lock.acquire(2, 'shared');
      bVerbs = diff(s.verbs(), before);
      expect(grant.validUntilNs).toBe(leaseEndNs(lease) - 50_000);
    })();
    await s.scheduler.run();
    await run;
    expect(bVerbs).toEqual({ cas: 1 });
    expect(s.word(2)).toBe(lease);
  });
});

describe('drtm: leases and the skew margin', () => {
  const small = { leaseNs: 40_000, driftNs: 2_000, txMarginNs: 10_000 };

  it('a writer waits out a read lease plus Δ, retrying its CAS all along (the artifact behaviour)', async () => {
    const s = scenario(small);
    const [r, w] = [s.client(0), s.client(1)];
    let endNs = 0;
    let grantedNs = 0;
    let writerVerbs = {};
    const run = (async () => {
      await r.lock.acquire(1, 'shared');
      endNs = leaseEndNs(s.word(1));
      const before = s.verbs();
      const grant = await w.lock.acquire(1, 'exclusive');
      grantedNs = s.now();
      writerVerbs = diff(s.verbs(), before);
      await w.lock.release(grant);
    })();
    await s.scheduler.run();
    await run;
    expect(grantedNs).toBeGreaterThan(endNs + small.driftNs);
    // Blind retries about one round trip apart, for ~40 µs.
    expect((writerVerbs as { cas: number }).cas).toBeGreaterThan(10);
  });

  it('with sleepUntilExpiry the writer sleeps out the lease instead: exactly two CAS', async () => {
    const s = scenario({ ...small, sleepUntilExpiry: true });
    const [r, w] = [s.client(0), s.client(1)];
    let endNs = 0;
    let grantedNs = 0;
    let writerVerbs = {};
    const run = (async () => {
      await r.lock.acquire(1, 'shared');
      endNs = leaseEndNs(s.word(1));
      const before = s.verbs();
      await w.lock.acquire(1, 'exclusive');
      grantedNs = s.now();
      writerVerbs = diff(s.verbs(), before);
    })();
    await s.scheduler.run();
    await run;
    expect(writerVerbs).toEqual({ cas: 2 });
    expect(grantedNs).toBeGreaterThan(endNs + small.driftNs);
  });

  it('a reader that finds less than Δ + txMargin left waits for the lease to expire and installs its own', async () => {
    const s = scenario({ ...small, sleepUntilExpiry: true });
    const [a, b] = [s.client(0), s.client(1)];
    let firstEnd = 0;
    let grant: Awaited<ReturnType<typeof b.lock.acquire>> | undefined;
    let grantedNs = 0;
    const run = (async () => {
      await a.lock.acquire(5, 'shared');
      firstEnd = leaseEndNs(s.word(5));
      await s.at(firstEnd - small.driftNs - small.txMarginNs + 1_000);
      grant = await b.lock.acquire(5, 'shared');
      grantedNs = s.now();
    })();
    await s.scheduler.run();
    await run;
    expect(grantedNs).toBeGreaterThan(firstEnd + small.driftNs);
    expect(grant!.validUntilNs).toBeGreaterThan(grantedNs + small.txMarginNs);
    expect(leaseEndNs(s.word(5))).toBeGreaterThan(firstEnd);
  });

  it('a reader whose lease-installing CAS came back too late pushes the lease end out before using it', async () => {
    const s = scenario(small);
    const { ports } = s.client(0);
    const verbs = ports.verbs;
    let slowOnce = true;
    // The first CAS completes, then its completion is held up for 30 µs: 40 − 2 − 30 < txMargin.
    const slowVerbs: Verbs = {
      post: verbs.post.bind(verbs),
      read: verbs.read.bind(verbs),
      write: verbs.write.bind(verbs),
      faa: verbs.faa.bind(verbs),
      maskedCas: verbs.maskedCas.bind(verbs),
      maskedFaa: verbs.maskedFaa.bind(verbs),
      isLocal: verbs.isLocal.bind(verbs),
      cpu: verbs.cpu,
      cas: async (...args) => {
        const found = await verbs.cas(...args);
        if (slowOnce) {
          slowOnce = false;
          await ports.clock.sleep(30_000);
        }
        return found;
      },
    };
    const reader = drtm.createClient({ ...ports, verbs: slowVerbs }, small) as DrtmClient;
    let firstLease = 0n;
    let grant: DrtmGrant | undefined;
    let grantedNs = 0;
    const run = (async () => {
      const startNs = s.now();
      firstLease = leaseWord(startNs + small.leaseNs);
      grant = await reader.acquire(6, 'shared');
      grantedNs = s.now();
    })();
    await s.scheduler.run();
    await run;
    expect(s.verbs()).toEqual({ cas: 2 });
    expect(leaseEndNs(s.word(6))).toBeGreaterThan(leaseEndNs(firstLease));
    expect(grant!.validUntilNs! - grantedNs).toBeGreaterThanOrEqual(small.txMarginNs);
  });

  it('a reader released after its lease is told so: LeaseExpiredError', async () => {
    const s = scenario(small);
    const a = s.client(0);
    let outcome: unknown;
    const run = (async () => {
      const grant = await a.lock.acquire(1, 'shared');
      await s.at(grant.validUntilNs! + 1);
      outcome = await a.lock.release(grant).catch((error: unknown) => error);
    })();
    await s.scheduler.run();
    await run;
    expect(outcome).toBeInstanceOf(LeaseExpiredError);
  });

  it('a writer behind a writer gives up at its deadline with LockTimeoutError and leaves the word alone', async () => {
    const s = scenario({ ...small, backoff: true });
    const [a, b] = [s.client(0), s.client(1)];
    let outcome: unknown;
    const run = (async () => {
      await a.lock.acquire(4, 'exclusive');
      outcome = await b.lock.acquire(4, 'exclusive', { timeoutMs: 0.05 }).catch((error: unknown) => error);
    })();
    await s.scheduler.run();
    await run;
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(s.word(4)).toBe(writeLockedWord(s.client(0).ports.self.node, s.client(0).ports.self.client));
  });

  it('rejects a lease too short to use, unknown options and bad values, each with a ConfigError', () => {
    const ports = scenario().client(0).ports;
    expect(() => drtm.createClient(ports, { leaseNs: 1000, driftNs: 500, txMarginNs: 500 })).toThrow(ConfigError);
    expect(() => drtm.createClient(ports, { nope: true })).toThrow(ConfigError);
    expect(() => drtm.createClient(ports, { driftNs: -1 })).toThrow(ConfigError);
  });
});
