import { describe, expect, it } from 'vitest';
import { ReceiveDedup, reAckDup } from './receive-dedup.js';

const SECOND_NS = 1_000_000_000;

describe('ReceiveDedup: the sequenced window', () => {
  it('remembers a packet and tells a ② copy apart from DUP copies of the same src:seq', () => {
    const dedup = new ReceiveDedup();
    dedup.record(3, 7, 'bounced', false, 0);
    expect(dedup.statusOf(3, 7)).toBe('bounced');
    expect(dedup.statusOf(3, 7, true)).toBeUndefined();
    dedup.record(3, 8, 'accepted', true, 0);
    expect(dedup.statusOf(3, 8)).toBe('accepted');
    expect(dedup.statusOf(3, 8, true)).toBe('accepted');
  });

  it('is bounded: a long run keeps about one second of packets, and a recent one is still known', () => {
    const dedup = new ReceiveDedup();
    // 200 k packets, one every 5 µs: 1 s of traffic
    for (let seq = 0; seq < 200_000; seq++) dedup.record(1, seq, 'accepted', false, seq * 5_000);
    // then 200 k more over the next second: everything older than 1 s goes
    for (let seq = 200_000; seq < 400_000; seq++) dedup.record(1, seq, 'accepted', false, seq * 5_000);
    expect(dedup.sequencedSize).toBeLessThanOrEqual(200_002);
    expect(dedup.statusOf(1, 399_999)).toBe('accepted');
    expect(dedup.statusOf(1, 300_000)).toBe('accepted');
    expect(dedup.statusOf(1, 10)).toBeUndefined();
  });

  it('prunes nothing while small, however old', () => {
    const dedup = new ReceiveDedup();
    for (let seq = 0; seq < 100; seq++) dedup.record(2, seq, 'accepted', false, seq * SECOND_NS);
    expect(dedup.sequencedSize).toBe(100);
    expect(dedup.statusOf(2, 0)).toBe('accepted');
  });
});

describe('reAckDup: the DUP bit of a re-ACK', () => {
  type Rule = typeof reAckDup;
  // (what the first copy got, its DUP bit, this copy's DUP bit) → the re-ACK's DUP bit
  const table: [Parameters<Rule>[0], boolean, boolean][] = [
    [{ status: 'bounced', dup: false }, true, false], // the first copy bounced not DUP: it travels on, REACHED
    [{ status: 'bounced', dup: true }, true, true],
    [{ status: 'bounced', dup: true }, false, false],
    [{ status: 'accepted', dup: false }, true, true],
    [{ status: 'accepted', dup: true }, false, false],
  ];
  const wrong = (rule: Rule): number => table.filter(([seen, copy, want]) => rule(seen, copy) !== want).length;

  it('DUP only if the bounced copy and this one both carry it; otherwise this copy\'s bit', () => {
    expect(wrong(reAckDup)).toBe(0);
  });

  it('mutant (the old rule, the new copy\'s bit alone) fails the table: a lost first ACK left the request unREACHED', () => {
    expect(wrong((_seen, copy) => copy)).toBe(1);
  });
});
