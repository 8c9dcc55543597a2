import { describe, expect, it } from 'vitest';
import { FailureDetector } from './failure-detector.js';
import type { HeartbeatInput } from './failure-detector.js';

const MS = 1_000_000;
const hb = (overrides: Partial<HeartbeatInput> = {}): HeartbeatInput => ({ role: 'compute', id: '1', node: 1, incarnation: 10n, seq: 1n, ready: true, ...overrides });

/** H = 100 ms, k = 3: suspected (and dead) after 300 ms of silence. */
const detector = (options: { confirmAfterMs?: number; maxMembers?: number } = {}) => new FailureDetector({ heartbeatIntervalMs: 100, missesBeforeSuspect: 3, ...options });

describe('FailureDetector', () => {
  it('admits a new instance and keeps it alive while it heartbeats every interval', () => {
    const d = detector();
    expect(d.heartbeat(hb(), 0)).toBe('joined');
    expect(d.liveSetVersion).toBe(1);
    for (let t = 100; t <= 2_000; t += 100) {
      expect(d.heartbeat(hb({ seq: BigInt(t) }), t * MS)).toBe('alive');
      expect(d.tick(t * MS + 50 * MS)).toStrictEqual([]);
    }
    expect(d.member('compute', '1')).toMatchObject({ state: 'alive', lastHeartbeatNs: 2_000 * MS, lastSeq: 2_000n });
    expect(d.liveSetVersion).toBe(1);
  });

  it('suspects after k silent intervals, not a nanosecond before, and declares the member dead on suspicion', () => {
    const d = detector();
    d.heartbeat(hb(), 1_000 * MS);
    expect(d.tick(1_300 * MS - 1)).toStrictEqual([]);
    expect(d.member('compute', '1')?.state).toBe('alive');
    expect(d.tick(1_300 * MS)).toStrictEqual([
      { role: 'compute', id: '1', from: 'alive', to: 'suspect', atNs: 1_300 * MS },
      { role: 'compute', id: '1', from: 'suspect', to: 'dead', atNs: 1_300 * MS },
    ]);
    expect(d.member('compute', '1')?.state).toBe('dead');
    expect(d.liveSetVersion).toBe(2);
    expect(d.tick(5_000 * MS)).toStrictEqual([]);
  });

  it('fences the old incarnation of a dead member and lets a higher one rejoin', () => {
    const d = detector();
    d.heartbeat(hb(), 0);
    d.tick(300 * MS);
    // The process was paused, not restarted: its old incarnation must not come back.
    expect(d.heartbeat(hb({ seq: 9n }), 400 * MS)).toBe('fenced');
    expect(d.member('compute', '1')?.state).toBe('dead');
    expect(d.liveSetVersion).toBe(2);
    expect(d.heartbeat(hb({ incarnation: 11n }), 500 * MS)).toBe('rejoined');
    expect(d.member('compute', '1')).toMatchObject({ state: 'alive', incarnation: 11n, sinceNs: 500 * MS });
    expect(d.liveSetVersion).toBe(3);
  });

  it('treats a higher incarnation of a live member as a restart (a change of the live set)', () => {
    const d = detector();
    d.heartbeat(hb(), 0);
    expect(d.heartbeat(hb({ incarnation: 12n, seq: 1n }), 50 * MS)).toBe('restarted');
    expect(d.member('compute', '1')).toMatchObject({ state: 'alive', incarnation: 12n });
    expect(d.liveSetVersion).toBe(2);
  });

  it('ignores a heartbeat of an older incarnation', () => {
    const d = detector();
    d.heartbeat(hb(), 0);
    expect(d.heartbeat(hb({ incarnation: 9n }), 250 * MS)).toBe('stale');
    expect(d.tick(300 * MS).map((t) => t.to)).toStrictEqual(['suspect', 'dead']);
  });

  it('with a confirmation time, a suspect that heartbeats is alive again and the live set never changed', () => {
    const d = detector({ confirmAfterMs: 200 });
    d.heartbeat(hb(), 0);
    expect(d.tick(300 * MS).map((t) => t.to)).toStrictEqual(['suspect']);
    expect(d.tick(499 * MS)).toStrictEqual([]);
    expect(d.heartbeat(hb({ seq: 2n }), 450 * MS)).toBe('refuted');
    expect(d.member('compute', '1')?.state).toBe('alive');
    expect(d.liveSetVersion).toBe(1);
    expect(d.tick(750 * MS).map((t) => t.to)).toStrictEqual(['suspect']);
    expect(d.tick(950 * MS).map((t) => t.to)).toStrictEqual(['dead']);
    expect(d.liveSetVersion).toBe(2);
  });

  it('keeps its table bounded: the longest-dead member makes room, live members never do', () => {
    const d = detector({ maxMembers: 2 });
    d.heartbeat(hb({ id: 'a' }), 0);
    d.heartbeat(hb({ id: 'b' }), 100 * MS);
    expect(d.heartbeat(hb({ id: 'c' }), 150 * MS)).toBe('table-full');
    d.tick(350 * MS); // a dies
    expect(d.heartbeat(hb({ id: 'c' }), 360 * MS)).toBe('joined');
    expect(d.members().map((m) => m.id)).toStrictEqual(['b', 'c']);
  });

  it('excuses silence while the coordinator itself could not hear, and counts it again from the end of the excuse', () => {
    const d = detector();
    d.heartbeat(hb(), 0);
    d.excuseSilenceUntil(Number.POSITIVE_INFINITY);
    expect(d.tick(10_000 * MS)).toStrictEqual([]);
    d.excuseSilenceUntil(10_500 * MS);
    expect(d.tick(10_799 * MS)).toStrictEqual([]);
    expect(d.tick(10_800 * MS).map((t) => t.to)).toStrictEqual(['suspect', 'dead']);
    // Without the excuse the same silence is a death (the mutant: an excuse that is ignored).
    const plain = detector();
    plain.heartbeat(hb(), 0);
    expect(plain.tick(10_000 * MS).map((t) => t.to)).toStrictEqual(['suspect', 'dead']);
  });

  it('recall: a member an earlier coordinator published is watched from the restart, and heard ones are untouched', () => {
    const d = detector();
    expect(d.heartbeat(hb({ id: '2', node: 2 }), 1_010 * MS)).toBe('joined');
    const listed = [
      { role: 'compute', id: '1', node: 1, incarnation: 10n, state: 'alive' as const },
      { role: 'compute', id: '2', node: 2, incarnation: 7n, state: 'alive' as const }, // heard since: keeps its entry
      { role: 'compute', id: '3', node: 3, incarnation: 10n, state: 'suspect' as const },
      { role: 'compute', id: '4', node: 4, incarnation: 10n, state: 'dead' as const },
    ];
    expect(d.recall(listed, 1_000 * MS)).toBe(3);
    expect(d.liveSetVersion).toBe(2);
    expect(d.member('compute', '2')).toMatchObject({ incarnation: 10n, lastHeartbeatNs: 1_010 * MS });
    expect(d.members().map((m) => `${m.id}:${m.state}`)).toStrictEqual(['2:alive', '1:alive', '3:alive', '4:dead']);
    // Its first heartbeat since the restart is a join, then it is an ordinary member.
    expect(d.heartbeat(hb({ seq: 50n }), 1_100 * MS)).toBe('joined');
    expect(d.heartbeat(hb({ seq: 51n }), 1_200 * MS)).toBe('alive');
    d.heartbeat(hb({ id: '2', node: 2, seq: 2n }), 1_250 * MS);
    // 3 stayed silent since the restart: suspected (and dead) one timeout after it, not before.
    expect(d.tick(1_300 * MS - 1)).toStrictEqual([]);
    expect(d.tick(1_300 * MS)).toStrictEqual([
      { role: 'compute', id: '3', from: 'alive', to: 'suspect', atNs: 1_300 * MS },
      { role: 'compute', id: '3', from: 'suspect', to: 'dead', atNs: 1_300 * MS },
    ]);
    // 4 was listed dead: its old incarnation stays fenced, a higher one rejoins.
    expect(d.heartbeat(hb({ id: '4', node: 4 }), 1_310 * MS)).toBe('fenced');
    expect(d.heartbeat(hb({ id: '4', node: 4, incarnation: 11n }), 1_320 * MS)).toBe('rejoined');
    // Recalled again, nothing is taken: every member is known.
    expect(d.recall(listed, 1_400 * MS)).toBe(0);
  });

  it('recall keeps the table bounded like heartbeats do', () => {
    const d = detector({ maxMembers: 2 });
    d.heartbeat(hb({ id: 'a' }), 0);
    const listed = ['b', 'c'].map((id) => ({ role: 'compute', id, node: 1, incarnation: 1n, state: 'alive' as const }));
    expect(d.recall(listed, 10 * MS)).toBe(1);
    expect(d.members().map((m) => m.id)).toStrictEqual(['a', 'b']);
  });

  it('rejects nonsensical settings', () => {
    expect(() => new FailureDetector({ heartbeatIntervalMs: 0, missesBeforeSuspect: 3 })).toThrow(RangeError);
    expect(() => new FailureDetector({ heartbeatIntervalMs: 100, missesBeforeSuspect: 0 })).toThrow(RangeError);
  });
});
