/** Update locks (spec §10): the six-field word, U–U conflicts, readers ahead and behind, skips. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import { formatCounters } from '../../src/index.js';
import { Scenario } from '../support/scenario.js';

const US = 1_000;

describe('dslr: update locks', () => {
  it('need the update layout', async () => {
    const s = new Scenario();
    await expect(s.client().acquireUpdate(0)).rejects.toBeInstanceOf(ConfigError);
  });

  it('an update lock conflicts with another update lock and with writers, not with earlier readers', async () => {
    const s = new Scenario({ updateLocks: true });
    const reader = s.hold(s.client(), { atNs: 0, mode: 'shared', holdNs: 30 * US });
    const u1 = s.hold(s.client(), { atNs: 1 * US, mode: 'update', holdNs: 20 * US });
    const u2 = s.hold(s.client(), { atNs: 2 * US, mode: 'update', holdNs: 20 * US });
    const writer = s.hold(s.client(), { atNs: 3 * US, mode: 'exclusive', holdNs: 5 * US });
    const lateReader = s.hold(s.client(), { atNs: 4 * US, mode: 'shared', holdNs: 5 * US });
    await s.run();
    const [r, a, b, w, lr] = await Promise.all([reader, u1, u2, writer, lateReader]);
    // U1 shares the lock with the earlier reader; U2 waits for U1; the writer for U2; the late reader for the writer
    expect(a.grantNs!).toBeLessThan(r.releasedNs!);
    expect(b.grantNs!).toBeGreaterThan(a.releasedNs! - 3 * US);
    expect(w.grantNs!).toBeGreaterThan(b.releasedNs! - 3 * US);
    expect(lr.grantNs!).toBeGreaterThan(w.releasedNs! - 3 * US);
    expect(formatCounters(s.counters(), s.layout)).toBe('{2,1,2,2,1,2}');
  });

  it('a dead update holder is skipped by the writer behind it; write access waits out the readers ahead', async () => {
    const s = new Scenario({ updateLocks: true, leaseNs: 100_000 });
    const client = s.client();
    const reader = s.hold(s.client(), { atNs: 0, mode: 'shared', holdNs: 30 * US });
    const events: string[] = [];
    s.at(1 * US, async () => {
      const grant = await client.acquireUpdate(0);
      events.push(`read ${client.canWrite(grant)}`);
      await client.awaitWriteAccess(grant);
      events.push(`write ${client.canWrite(grant)}`);
      // and then it dies holding the lock
    });
    const writer = s.hold(s.client(), { atNs: 2 * US, mode: 'exclusive', holdNs: 5 * US });
    const after = s.hold(s.client(), { atNs: 3 * US, mode: 'exclusive', holdNs: 5 * US });
    await s.run();
    const [r, w, a] = await Promise.all([reader, writer, after]);
    expect(events).toEqual(['read false', 'write true']);
    expect(r.granted).toBe(true);
    expect(w).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(a.granted).toBe(true);
    // the skip set nU past the dead update ticket: {nU, nX, nS, maxU, maxX, maxS}
    expect(formatCounters(s.counters(), s.layout)).toBe('{1,2,1,1,2,1}');
  });
});
