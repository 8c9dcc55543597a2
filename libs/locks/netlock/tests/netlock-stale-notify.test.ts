import type { LockMode, LockPacket } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { Switch } from '@lockfabric/switch';
import type { EgressAction } from '@lockfabric/switch';
import { NETLOCK_FLAG_CONTINUE, netlockProgram, serialOfTag, slotOfTag, slotTag } from '../src/index.js';
import type { NetLockProgramOptions } from '../src/index.js';

// A CONTINUE notify that its grantee's own RELEASE overtook (a delayed or reordered packet; swarm
// seed 478) names a slot the queue has since reused. Lock 5 is hot with a queue of 3 slots.
const LOCK = 5;

function rig(options: NetLockProgramOptions = {}) {
  const sw = new Switch(netlockProgram({ slotBudget: 16, allocation: [{ lock: LOCK, base: 0, size: 3 }], ...options }));
  let rid = 0;
  const held = new Map<number, LockPacket>();
  const send = (packet: Omit<LockPacket, 'lock' | 'task' | 'flags' | 'seq' | 'incarnation'> & Partial<LockPacket>): EgressAction[] => {
    const actions = sw.ingest({ lock: LOCK, task: 0, incarnation: 0, seq: ++rid, flags: 0, dst: 9, ...packet }, packet.machine);
    for (const a of actions) if (a.kind === 'unicast' && a.packet.type === 'grant') held.set(a.machine, a.packet);
    return actions;
  };
  const acquire = (machine: number, mode: LockMode) => send({ type: 'acquire', machine, mode });
  const release = (machine: number) => {
    const grant = held.get(machine);
    if (!grant) throw new Error(`machine ${machine} holds nothing`);
    held.delete(machine);
    return send({ type: 'release', machine, mode: grant.mode, seq: grant.seq, incarnation: grant.incarnation });
  };
  const notify = (machine: number, incarnation: number) => send({ type: 'notify', machine, mode: 'shared', seq: 0, incarnation });
  return { acquire, release, notify, held };
}

const grants = (actions: readonly EgressAction[]) => actions.flatMap((a) => (a.kind === 'unicast' && a.packet.type === 'grant' ? [a.machine] : []));

/** Runs the queue until reader 2's CONTINUE notify is stale and a writer holds its slot; returns what the notify does. */
function staleNotifyBehindWriter(options: NetLockProgramOptions = {}) {
  const { acquire, release, notify, held } = rig(options);
  expect(grants(acquire(1, 'exclusive'))).toEqual([1]); // slot 0
  acquire(2, 'shared'); // slot 1
  acquire(3, 'shared'); // slot 2
  expect(grants(release(1))).toEqual([2]);
  const continued = held.get(2) as LockPacket;
  expect(continued.flags & NETLOCK_FLAG_CONTINUE).toBe(NETLOCK_FLAG_CONTINUE);
  expect(slotOfTag(continued.incarnation)).toBe(1);
  // 2's notify is delayed; its release overtakes it and ends the run: 3 is granted, then releases.
  expect(grants(release(2))).toEqual([3]);
  expect(grants(release(3))).toEqual([]);
  // Another cycle moves the head onto slot 1: writer 4 holds it, reader 5 waits in slot 2.
  expect(grants(acquire(6, 'exclusive'))).toEqual([6]); // slot 0
  expect(grants(release(6))).toEqual([]);
  expect(grants(acquire(4, 'exclusive'))).toEqual([4]); // slot 1
  expect(slotOfTag((held.get(4) as LockPacket).incarnation)).toBe(1);
  expect(grants(acquire(5, 'shared'))).toEqual([]); // slot 2
  return grants(notify(2, continued.incarnation));
}

describe('netlock notify: the entry serial', () => {
  it('a grant tag carries the slot and the serial, and they round-trip', () => {
    const tag = slotTag(4094, 65_535);
    expect(slotOfTag(tag)).toBe(4094);
    expect(serialOfTag(tag)).toBe(65_535);
    expect(slotOfTag(0)).toBeUndefined();
  });

  it('a stale notify naming a slot a writer now holds grants nobody', () => {
    expect(staleNotifyBehindWriter()).toEqual([]);
  });

  it('mutant: unchecked, the stale notify grants the reader behind the writer', () => {
    expect(staleNotifyBehindWriter({ mutantUncheckedNotify: true })).toEqual([5]);
  });

  it('a fresh notify still extends a reader run', () => {
    const { acquire, release, notify, held } = rig();
    acquire(1, 'exclusive');
    acquire(2, 'shared');
    acquire(3, 'shared');
    expect(grants(release(1))).toEqual([2]);
    expect(grants(notify(2, (held.get(2) as LockPacket).incarnation))).toEqual([3]);
  });

  it('slot budgets a 16-bit tag cannot name are refused', () => {
    expect(() => netlockProgram({ slotBudget: 70_000 })).toThrow(/slotBudget must be an integer in \[1, 65535\]/);
  });
});
