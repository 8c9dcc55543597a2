import { describe, expect, it } from 'vitest';
import { NS_PER_MS } from '@lockfabric/ports';
import { WordLayout, drainedState, formatCounters, isGranted, isWritable, ticketsAhead } from '../../src/index.js';
import type { Counters } from '../../src/index.js';
import { Scenario } from '../support/scenario.js';

const standard = WordLayout.of('standard');
const c = (nX: number, nS: number, maxX: number, maxS: number): Counters => ({ nX, nS, nU: 0, maxX, maxS, maxU: 0 });

describe('lock word codec (spec §4.1)', () => {
  it('packs {nX, nS, maxX, maxS} high to low, 16 bits each', () => {
    expect(standard.encode(c(1, 2, 3, 4))).toBe(0x0001_0002_0003_0004n);
    expect(standard.decode(0x0001_0002_0003_0004n)).toEqual(c(1, 2, 3, 4));
    expect(standard.get(0xabcd_0000_0000_0000n, 'nX')).toBe(0xabcd);
    expect(standard.increment('maxX', 3)).toBe(3n << 16n);
    expect(standard.increment('nS', 1)).toBe(1n << 32n);
  });

  it('a decrement is the two’s complement: it borrows through every field above when the field is 0 (A3)', () => {
    const borrowed = (0n + standard.decrement('maxX', 1)) % (1n << 64n);
    expect(formatCounters(standard.decode(borrowed), standard)).toBe('{65535,65535,65535,0}');
    expect((standard.encode(c(0, 0, 5, 0)) + standard.decrement('maxX', 1)) % (1n << 64n)).toBe(standard.encode(c(0, 0, 4, 0)));
  });

  it('the update layout packs {nU, nX, nS, maxU, maxX, maxS} in 10-bit fields, limit 512 (A15)', () => {
    const update = WordLayout.of('update');
    expect(update.counterLimit).toBe(512);
    const word = update.encode({ nU: 1, nX: 2, nS: 3, maxU: 4, maxX: 5, maxS: 6 });
    expect(word).toBe((1n << 52n) | (2n << 42n) | (3n << 32n) | (4n << 20n) | (5n << 10n) | 6n);
    expect(update.decode(word)).toEqual({ nU: 1, nX: 2, nS: 3, maxU: 4, maxX: 5, maxS: 6 });
    expect(() => update.encode({ nU: 0, nX: 0, nS: 1024, maxU: 0, maxX: 0, maxS: 0 })).toThrow(RangeError);
    expect(() => standard.encode({ ...c(0, 0, 0, 0), maxU: 1 })).toThrow(RangeError);
  });

  it('frozen once either max counter reaches the limit', () => {
    expect(standard.frozen(c(0, 0, 32767, 32767))).toBe(false);
    expect(standard.frozen(c(0, 0, 32768, 0))).toBe(true);
    expect(standard.frozen(c(0, 0, 0, 32768))).toBe(true);
  });
});

describe('Figure 4: T3 asks for exclusive on {1,1,1,4}', () => {
  it('rules: the ticket waits for 3 shared tickets; a shared request would be granted at once', () => {
    const ticket = c(1, 1, 1, 4);
    expect(isGranted('exclusive', ticket, ticket)).toBe(false);
    expect(ticketsAhead(ticket, ticket)).toBe(3);
    expect(isGranted('exclusive', ticket, c(1, 4, 2, 4))).toBe(true);
    expect(isGranted('shared', ticket, ticket)).toBe(true);
  });

  it('on the fabric: one FAA makes {1,1,2,4}, T3 holds ticket {1,1,1,4} and is granted when nS reaches 4', async () => {
    const s = new Scenario();
    s.setCounters(c(1, 1, 1, 4));
    const t3 = s.client();
    const outcome = s.hold(t3, { atNs: 0, mode: 'exclusive', holdNs: 1_000 });
    let whileWaiting = '';
    s.at(10_000, async () => {
      whileWaiting = formatCounters(s.counters(), standard);
      await s.ports().verbs.faa(s.addr(0), standard.increment('nS', 3));
    });
    await s.run();
    const held = await outcome;
    expect(whileWaiting).toBe('{1,1,2,4}');
    expect(held.granted).toBe(true);
    expect(formatCounters(standard.decode(held.grant!.ticket), standard)).toBe('{1,1,1,4}');
    expect(held.grantNs!).toBeGreaterThan(10_000);
    expect(formatCounters(s.counters(), standard)).toBe('{2,4,2,4}');
  });
});

describe('Figure 5: T3 breaks a deadlock on {1,1,1,4}', () => {
  it('after 2λ without counter movement T3 CASes {1,1,2,4} to {2,4,2,4} and fails', async () => {
    const s = new Scenario({ leaseNs: 100_000 });
    s.setCounters(c(1, 1, 1, 4));
    const outcome = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 1_000 });
    await s.run();
    const held = await outcome;
    expect(held).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(formatCounters(s.counters(), standard)).toBe('{2,4,2,4}');
    const [, failed] = s.history.events();
    expect(failed!.timeNs).toBeGreaterThan(2 * 0.1 * NS_PER_MS);
  });
});

describe('Figure 6: counter reset by the designated resetter', () => {
  it('rules: ResetFrom of a shared ticket with maxS = 32767 is {30000,32768,30000,32768}', () => {
    expect(formatCounters(drainedState('shared', c(29998, 32765, 30000, 32767), 1), standard)).toBe('{30000,32768,30000,32768}');
    expect(formatCounters(drainedState('exclusive', c(29998, 32765, 32767, 100), 1), standard)).toBe('{32768,100,32768,100}');
  });

  it('T3 becomes the resetter, later requests bounce, the word is 0 after T3 releases, then service resumes', async () => {
    const s = new Scenario();
    s.setCounters(c(29998, 32765, 30000, 32767));
    const t3 = s.hold(s.client(), { atNs: 0, mode: 'shared', holdNs: 5_000 });
    const late = s.hold(s.client(), { atNs: 3_000, mode: 'exclusive', holdNs: 1_000 });
    let frozen = '';
    s.at(2_500, async () => {
      frozen = formatCounters(s.counters(), standard);
    });
    s.at(6_000, async () => {
      const verbs = s.ports().verbs;
      // the two exclusive holders and two readers ahead of T3 release
      await verbs.faa(s.addr(0), standard.increment('nX', 2));
      await verbs.faa(s.addr(0), standard.increment('nS', 2));
    });
    await s.run();
    const [resetter, bounced] = await Promise.all([t3, late]);
    expect(frozen).toBe('{29998,32765,30000,32768}');
    expect(resetter.granted).toBe(true);
    expect(resetter.grant!.resetFrom).toBe(standard.encode(c(30000, 32768, 30000, 32768)));
    expect(bounced.granted).toBe(true);
    expect(bounced.grantNs!).toBeGreaterThan(resetter.releasedNs!);
    // the bouncer's ticket is the first of the new generation
    expect(formatCounters(standard.decode(bounced.grant!.ticket), standard)).toBe('{0,0,0,0}');
    expect(formatCounters(s.counters(), standard)).toBe('{1,0,1,0}');
  });
});

describe('Figure 7: update lock on {0,0,0,0,0,2}', () => {
  it('T3 is granted read access at once and write access when nS reaches 2; later requests wait for its release', async () => {
    const s = new Scenario({ updateLocks: true });
    const update = s.layout;
    s.setCounters({ maxS: 2 });
    const client = s.client();
    const events: string[] = [];
    const t3 = s.at(0, async () => {
      const grant = await client.acquireUpdate(0);
      events.push(`granted ${formatCounters(update.decode(grant.ticket), update)} writable=${client.canWrite(grant)} word=${formatCounters(s.counters(), update)}`);
      await client.awaitWriteAccess(grant);
      events.push(`writable at ${formatCounters(s.counters(), update)}`);
      await s.cluster.clock.sleep(5_000);
      await client.release(grant);
      events.push('released');
    });
    const reader = s.hold(s.client(), { atNs: 2_000, mode: 'shared', holdNs: 100 });
    s.at(20_000, async () => {
      events.push('readers release');
      await s.ports().verbs.faa(s.addr(0), update.increment('nS', 2));
    });
    await s.run();
    await t3;
    const r = await reader;
    expect(events).toEqual(['granted {0,0,0,0,0,2} writable=false word={0,0,0,1,0,2}', 'readers release', 'writable at {0,0,2,1,0,3}', 'released']);
    expect(isWritable({ nU: 0, nX: 0, nS: 0, maxU: 0, maxX: 0, maxS: 2 }, { nU: 0, nX: 0, nS: 2, maxU: 1, maxX: 0, maxS: 2 })).toBe(true);
    expect(r.granted).toBe(true);
    expect(r.grantNs!).toBeGreaterThan(20_000);
    expect(formatCounters(s.counters(), update)).toBe('{1,0,3,1,0,3}');
  });
});
