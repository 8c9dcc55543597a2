import { describe, expect, it } from 'vitest';
import { epochFloor } from './epoch-source.js';
import { UNHEARD_INCARNATION } from './failure-detector.js';
import type { HeartbeatInput } from './failure-detector.js';
import { Membership } from './membership.js';
import type { MembershipOptions, MembershipView, PublishReason } from './membership.js';

const MS = 1_000_000;
const hb = (id: string, incarnation = 1n): HeartbeatInput => ({ role: 'compute', id, node: Number(id), incarnation, seq: 1n, ready: true });

/** H = 100 ms, k = 2: warm-up and suspicion after 200 ms; started at t = 1 s. */
function setup(options: Pick<MembershipOptions, 'announceIntervalMs' | 'mutantIgnoreRecall' | 'expected' | 'mutantIgnoreExpectedMembers'> = {}) {
  const published: { view: MembershipView; reason: PublishReason }[] = [];
  const membership = new Membership({ heartbeatIntervalMs: 100, missesBeforeSuspect: 2, ...options }, 1_000 * MS, (view, reason) => published.push({ view, reason }));
  const states = (i: number) => Object.fromEntries((published[i]?.view.members ?? []).map((m) => [m.id, m.state]));
  return { membership, published, states };
}

describe('Membership', () => {
  it('publishes nothing during warm-up, then one view with every member heard', () => {
    const { membership, published, states } = setup();
    membership.heartbeat(hb('1'), 1_050 * MS);
    membership.heartbeat(hb('2'), 1_100 * MS);
    membership.tick(1_150 * MS);
    expect(published).toStrictEqual([]);
    expect(membership.snapshot(1_150 * MS).epoch).toBe(0n);
    membership.heartbeat(hb('1'), 1_150 * MS);
    membership.heartbeat(hb('2'), 1_190 * MS);
    membership.tick(1_200 * MS);
    expect(published.map((p) => p.reason)).toStrictEqual(['change']);
    expect(states(0)).toStrictEqual({ '1': 'alive', '2': 'alive' });
    expect(published[0]?.view.epoch).toBe(epochFloor(1_200 * MS));
  });

  it('publishes a higher epoch on each change of the live set: join, death, rejoin', () => {
    const { membership, published, states } = setup();
    membership.tick(1_200 * MS);
    membership.heartbeat(hb('1'), 1_210 * MS);
    expect(states(1)).toStrictEqual({ '1': 'alive' });
    membership.heartbeat(hb('1'), 1_300 * MS);
    membership.tick(1_499 * MS);
    expect(published).toHaveLength(2);
    membership.tick(1_500 * MS);
    expect(states(2)).toStrictEqual({ '1': 'dead' });
    membership.heartbeat(hb('1'), 1_550 * MS); // the old incarnation: fenced, no change
    expect(published).toHaveLength(3);
    membership.heartbeat(hb('1', 2n), 1_600 * MS);
    expect(states(3)).toStrictEqual({ '1': 'alive' });
    const epochs = published.map((p) => p.view.epoch);
    for (let i = 1; i < epochs.length; i++) expect(epochs[i]).toBeGreaterThan(epochs[i - 1] as bigint);
    expect(published.every((p) => p.reason === 'change')).toBe(true);
  });

  it('announces the current view again, with the same epoch, when nothing changed', () => {
    const { membership, published } = setup({ announceIntervalMs: 500 });
    membership.heartbeat(hb('1'), 1_100 * MS);
    membership.tick(1_200 * MS);
    for (let t = 1_250; t <= 1_700; t += 50) {
      membership.heartbeat(hb('1'), t * MS);
      membership.tick(t * MS);
    }
    expect(published.map((p) => p.reason)).toStrictEqual(['change', 'announce']);
    expect(published[1]?.view.epoch).toBe(published[0]?.view.epoch);
    expect(published[1]?.view.timeNs).toBe(1_700 * MS);
  });

  it('continues above an epoch published elsewhere', () => {
    const { membership, published } = setup();
    const foreign = epochFloor(9_999_000 * MS);
    membership.observeEpoch(foreign);
    membership.tick(1_200 * MS);
    expect(published[0]?.view.epoch).toBe(foreign + 1n);
  });
  it('declareDead (a member that cannot take part in a recovery) publishes a view without it at once; its incarnation stays fenced', () => {
    const { membership, published, states } = setup();
    membership.heartbeat(hb('1'), 1_050 * MS);
    membership.heartbeat(hb('2'), 1_050 * MS);
    membership.tick(1_200 * MS);
    expect(published).toHaveLength(1);
    expect(membership.declareDead('compute', '2', 1_210 * MS)).toStrictEqual({ role: 'compute', id: '2', from: 'alive', to: 'dead', atNs: 1_210 * MS });
    expect(published).toHaveLength(2);
    expect(published[1]?.view.epoch).toBeGreaterThan(published[0]!.view.epoch);
    expect(states(1)).toStrictEqual({ '1': 'alive', '2': 'dead' });
    // a second declaration, or one of an unknown member, changes nothing
    expect(membership.declareDead('compute', '2', 1_220 * MS)).toBeUndefined();
    expect(membership.declareDead('compute', '9', 1_220 * MS)).toBeUndefined();
    expect(published).toHaveLength(2);
    // it still heartbeats under the same incarnation: fenced; a restart rejoins it
    expect(membership.heartbeat(hb('2'), 1_230 * MS)).toBe('fenced');
    expect(membership.heartbeat(hb('2', 2n), 1_240 * MS)).toBe('rejoined');
  });

  // The predecessor published 1, 2, 3 alive (its clock ran ahead: its epoch is above this one's
  // floor); this instance starts at 1 s and gets that view back 40 ms later. 1 and 2 heartbeat,
  // 3 died while no coordinator ran, 4 never joined at all.
  function restartAfterOutage(options: { mutantIgnoreRecall?: boolean } = {}) {
    const { membership, published, states } = setup(options);
    const member = (id: string) => ({ role: 'compute', id, node: Number(id), incarnation: 1n, state: 'alive' as const });
    const recalled = { epoch: epochFloor(1_500 * MS) + 3n, members: ['1', '2', '3'].map(member) };
    membership.recall(recalled, 1_040 * MS);
    const deaths: string[] = [];
    for (let t = 1_050; t <= 1_600; t += 50) {
      deaths.push(...membership.tick(t * MS).filter((x) => x.to === 'dead').map((x) => `${x.id}@${x.atNs / MS}`));
      membership.heartbeat(hb('1'), t * MS);
      membership.heartbeat(hb('2'), t * MS);
    }
    return { deaths, first: published[0]?.view, firstStates: states(0), recalledEpoch: recalled.epoch };
  }

  it('after a restart, a member the recalled view lists that stays silent is declared dead one timeout after the start; one that never joined is not', () => {
    const { deaths, first, firstStates, recalledEpoch } = restartAfterOutage();
    expect(deaths).toStrictEqual(['3@1200']);
    // The first view (end of warm-up) already says so, above the predecessor's epoch; 4 is nowhere.
    expect(first?.timeNs).toBe(1_200 * MS);
    expect(firstStates).toStrictEqual({ '1': 'alive', '2': 'alive', '3': 'dead' });
    expect(first!.epoch).toBeGreaterThan(recalledEpoch);
  });

  it('mutant: a recall that is ignored (the old rule) leaves the silent member undeclared, and the test above fails on it', () => {
    const { deaths, firstStates, first, recalledEpoch } = restartAfterOutage({ mutantIgnoreRecall: true });
    expect(deaths).toStrictEqual([]);
    expect(firstStates).toStrictEqual({ '1': 'alive', '2': 'alive' });
    expect(first!.epoch).toBeLessThan(recalledEpoch);
  });

  it('only the first recalled view of a life counts', () => {
    const { membership } = setup();
    const view = (id: string) => ({ epoch: 5n, members: [{ role: 'compute', id, node: Number(id), incarnation: 1n, state: 'alive' as const }] });
    expect(membership.recall(view('1'), 1_010 * MS)).toBe(1);
    expect(membership.recall(view('2'), 1_020 * MS)).toBe(0);
    expect(membership.detector.members().map((m) => m.id)).toStrictEqual(['1']);
  });

  // A (re)started coordinator that expects compute nodes 1, 2, 3 (its configuration) and recalled
  // no view: its predecessor crashed before its first view. 1 heartbeats at once, 2 only 150 ms
  // in, 3 died during the outage; 4 is not expected and never heartbeats.
  function expectedAfterRestart(options: Pick<MembershipOptions, 'mutantIgnoreExpectedMembers'> = {}) {
    const expected = ['1', '2', '3'].map((id) => ({ role: 'compute', id, node: Number(id) }));
    const { membership, published, states } = setup({ expected, ...options });
    const deaths: string[] = [];
    const outcomes: string[] = [];
    for (let t = 1_000; t <= 1_600; t += 50) {
      deaths.push(...membership.tick(t * MS).filter((x) => x.to === 'dead').map((x) => `${x.id}@${x.atNs / MS}`));
      outcomes.push(membership.heartbeat(hb('1', 7n), t * MS));
      if (t >= 1_150) outcomes.push(membership.heartbeat(hb('2', 8n), t * MS));
    }
    return { membership, deaths, outcomes, first: published[0]?.view, firstStates: states(0) };
  }

  it('an expected member silent after a (re)start is declared dead one timeout after the start; one heard in time is not; an unexpected one that never joined is nowhere', () => {
    const { deaths, outcomes, first, firstStates } = expectedAfterRestart();
    expect(deaths).toStrictEqual(['3@1200']);
    expect(outcomes.filter((o) => o === 'joined')).toHaveLength(2);
    expect(first?.timeNs).toBe(1_200 * MS);
    expect(firstStates).toStrictEqual({ '1': 'alive', '2': 'alive', '3': 'dead' });
    // members heard are listed under the incarnation they named; the dead one under none heard
    expect(first?.members.map((m) => `${m.id}#${m.incarnation}`)).toStrictEqual(['1#7', '2#8', `3#${UNHEARD_INCARNATION}`]);
  });

  it('mutant: expected members ignored (the old rule) leave the silent one undeclared, and the test above fails on it', () => {
    const { deaths, firstStates } = expectedAfterRestart({ mutantIgnoreExpectedMembers: true });
    expect(deaths).toStrictEqual([]);
    expect(firstStates).toStrictEqual({ '1': 'alive', '2': 'alive' });
  });

  it('an expected member declared dead unheard that heartbeats later is dead under the incarnation it names, and rejoins with a higher one', () => {
    const { membership } = expectedAfterRestart();
    const before = membership.snapshot(1_650 * MS).members.find((m) => m.id === '3');
    expect(before).toMatchObject({ state: 'dead', incarnation: UNHEARD_INCARNATION });
    expect(membership.heartbeat(hb('3', 5n), 1_650 * MS)).toBe('identified');
    expect(membership.view?.members.find((m) => m.id === '3')).toMatchObject({ state: 'dead', incarnation: 5n });
    // that incarnation is fenced now, as any dead one; the node's rejoin (a new incarnation) brings it back
    expect(membership.heartbeat(hb('3', 5n), 1_700 * MS)).toBe('fenced');
    expect(membership.heartbeat(hb('3', 6n), 1_750 * MS)).toBe('rejoined');
    expect(membership.view?.members.find((m) => m.id === '3')).toMatchObject({ state: 'alive', incarnation: 6n });
  });

  it('a recalled view names the incarnation of an expected member not yet heard', () => {
    const { membership } = setup({ expected: [{ role: 'compute', id: '1', node: 1 }] });
    const recalled = { epoch: 5n, members: [{ role: 'compute', id: '1', node: 1, incarnation: 3n, state: 'alive' as const }] };
    expect(membership.recall(recalled, 1_010 * MS)).toBe(1);
    expect(membership.detector.member('compute', '1')).toMatchObject({ incarnation: 3n, state: 'alive' });
    // its old incarnation heard again joins as recalled members do; silence from the start would declare it
    expect(membership.heartbeat(hb('1', 3n), 1_020 * MS)).toBe('joined');
  });

  it('a recalled view listing an expected member dead unheard keeps it unheard: its first heartbeat is identified, not a rejoin', () => {
    const { membership } = setup({ expected: [{ role: 'compute', id: '3', node: 3 }] });
    const recalled = { epoch: 5n, members: [{ role: 'compute', id: '3', node: 3, incarnation: UNHEARD_INCARNATION, state: 'dead' as const }] };
    expect(membership.recall(recalled, 1_010 * MS)).toBe(1);
    expect(membership.heartbeat(hb('3', 5n), 1_020 * MS)).toBe('identified');
    expect(membership.detector.member('compute', '3')).toMatchObject({ state: 'dead', incarnation: 5n });
  });
});
