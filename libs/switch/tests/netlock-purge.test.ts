import type { LockMode, LockPacket } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { NETLOCK_FLAG_CONTINUE, NETLOCK_FLAG_SWITCH, Switch, netlockProgram } from '../src/index.js';
import type { EgressAction, NetLockProgramOptions } from '../src/index.js';

// The purge of a dead machine's NetLock switch-queue entries (control plane) and the fence that
// keeps its late packets out. Lock 7 is hot with a queue of 8 slots; machine 9 is the lock server.
const LOCK = 7;
const SERVER = 9;
const DEAD = 3;

function setup(options: NetLockProgramOptions = {}) {
  const program = netlockProgram({ slotBudget: 64, allocation: [{ lock: LOCK, base: 0, size: 8 }], ...options });
  const sw = new Switch(program);
  let rid = 0;
  const send = (type: LockPacket['type'], machine: number, mode: LockMode, extra: Partial<LockPacket> = {}): EgressAction[] =>
    sw.ingest({ type, lock: LOCK, machine, task: 0, mode, incarnation: 0, seq: extra.seq ?? ++rid, flags: 0, dst: SERVER, ...extra }, machine);
  const acquire = (machine: number, mode: LockMode) => send('acquire', machine, mode);
  const release = (machine: number, mode: LockMode) => send('release', machine, mode);
  return { sw, program, acquire, release, send };
}

/** Machines a list of egress actions grants the lock to. */
function granted(actions: readonly EgressAction[]): number[] {
  return actions.flatMap((a) => (a.kind === 'unicast' && a.packet.type === 'grant' ? [a.machine] : []));
}

describe('netlock purge: a dead machine’s queue entries', () => {
  it('dead exclusive holder at the head: removed, the next exclusive waiter is granted', () => {
    const { program, acquire, release } = setup();
    expect(granted(acquire(DEAD, 'exclusive'))).toEqual([DEAD]);
    expect(granted(acquire(1, 'exclusive'))).toEqual([]);
    expect(granted(acquire(2, 'exclusive'))).toEqual([]);
    const result = program.purgeMachine(DEAD);
    expect(result).toMatchObject({ removed: 1, removedHolders: 1, locks: [LOCK], wasFenced: false });
    expect(result.grants.map((g) => [g.dst, g.mode, g.type, g.flags])).toEqual([[1, 'exclusive', 'grant', NETLOCK_FLAG_SWITCH]]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 1, exclusive: 2 });
    // The queue goes on as before: 1 releases, 2 is granted, 2 releases, the queue is empty.
    expect(granted(release(1, 'exclusive'))).toEqual([2]);
    expect(granted(release(2, 'exclusive'))).toEqual([]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 0, granted: 0, exclusive: 0 });
  });

  it('dead waiter in the middle: removed without a grant; the holder’s release skips it', () => {
    const { program, acquire, release } = setup();
    acquire(1, 'exclusive');
    acquire(DEAD, 'exclusive');
    acquire(2, 'shared');
    const result = program.purgeMachine(DEAD);
    expect(result).toMatchObject({ removed: 1, removedHolders: 0, grants: [] });
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 1, exclusive: 1 });
    expect(granted(release(1, 'exclusive'))).toEqual([2]);
  });

  it('dead holder before a run of shared waiters: the whole run is granted, up to the next writer', () => {
    const { program, acquire, release } = setup();
    acquire(DEAD, 'exclusive');
    acquire(1, 'shared');
    acquire(2, 'shared');
    acquire(4, 'shared');
    acquire(5, 'exclusive');
    acquire(6, 'shared');
    const result = program.purgeMachine(DEAD);
    expect(result.grants.map((g) => [g.dst, g.mode])).toEqual([
      [1, 'shared'],
      [2, 'shared'],
      [4, 'shared'],
    ]);
    // No CONTINUE: the purge granted the run itself, nobody has to reflect a notify.
    expect(result.grants.every((g) => (g.flags & NETLOCK_FLAG_CONTINUE) === 0)).toBe(true);
    expect(program.queueState(LOCK)).toMatchObject({ count: 5, granted: 3, exclusive: 1 });
    release(1, 'shared');
    release(2, 'shared');
    expect(granted(release(4, 'shared'))).toEqual([5]);
    expect(granted(release(5, 'exclusive'))).toEqual([6]);
  });

  it('dead reader inside a granted shared run: survivors keep holding, nobody new is granted past the writer', () => {
    const { program, acquire, release } = setup();
    acquire(1, 'shared');
    acquire(DEAD, 'shared');
    acquire(2, 'shared');
    acquire(5, 'exclusive');
    expect(program.queueState(LOCK)).toMatchObject({ count: 4, granted: 3 });
    const result = program.purgeMachine(DEAD);
    expect(result).toMatchObject({ removed: 1, removedHolders: 1, grants: [] });
    expect(program.queueState(LOCK)).toMatchObject({ count: 3, granted: 2, exclusive: 1 });
    expect(granted(release(1, 'shared'))).toEqual([]);
    expect(granted(release(2, 'shared'))).toEqual([5]);
  });

  it('a dead reader that never reflected its CONTINUE notify: the stranded readers behind it are granted', () => {
    const { program, acquire, release } = setup();
    acquire(4, 'exclusive');
    acquire(DEAD, 'shared');
    acquire(1, 'shared');
    acquire(2, 'shared');
    const handover = release(4, 'exclusive');
    expect(handover.map((a) => (a.kind === 'unicast' ? [a.machine, (a.packet.flags & NETLOCK_FLAG_CONTINUE) !== 0] : a.kind))).toEqual([[DEAD, true]]);
    // DEAD dies before it sends the notify that would grant 1 (and 1's would grant 2).
    const result = program.purgeMachine(DEAD);
    expect(result.grants.map((g) => g.dst)).toEqual([1, 2]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 2, exclusive: 0 });
  });

  it('a lock queued only by the dead machine: emptied, and free for the next acquire', () => {
    const { program, acquire } = setup();
    acquire(DEAD, 'exclusive');
    acquire(DEAD, 'exclusive');
    expect(program.purgeMachine(DEAD)).toMatchObject({ removed: 2, removedHolders: 1, grants: [] });
    expect(program.queueState(LOCK)).toMatchObject({ count: 0, granted: 0, exclusive: 0 });
    expect(granted(acquire(1, 'exclusive'))).toEqual([1]);
  });

  it('compaction across the circular buffer’s wrap keeps queue order', () => {
    const { program, acquire, release } = setup();
    // Move the head to slot 6 of 8, then queue 1, DEAD, 2, DEAD, 4 so the entries wrap to slots 0–2.
    for (let i = 0; i < 6; i++) {
      acquire(1, 'exclusive');
      release(1, 'exclusive');
    }
    expect(program.queueState(LOCK)).toMatchObject({ head: 6, count: 0 });
    acquire(1, 'exclusive');
    acquire(DEAD, 'exclusive');
    acquire(2, 'exclusive');
    acquire(DEAD, 'exclusive');
    acquire(4, 'exclusive');
    expect(program.purgeMachine(DEAD)).toMatchObject({ removed: 2, grants: [] });
    expect(granted(release(1, 'exclusive'))).toEqual([2]);
    expect(granted(release(2, 'exclusive'))).toEqual([4]);
    expect(granted(release(4, 'exclusive'))).toEqual([]);
  });

  it('is idempotent: a second purge removes and grants nothing, and says the machine was fenced', () => {
    const { program, acquire } = setup();
    acquire(DEAD, 'exclusive');
    acquire(1, 'exclusive');
    expect(program.purgeMachine(DEAD).grants).toHaveLength(1);
    expect(program.purgeMachine(DEAD)).toMatchObject({ removed: 0, grants: [], locks: [], wasFenced: true });
    expect(program.queueState(LOCK)).toMatchObject({ count: 1, granted: 1 });
  });

  it('out-of-range machine ids are a control error, not a crash', () => {
    const { program } = setup({ maxMachines: 16 });
    expect(() => program.purgeMachine(16)).toThrow(/outside the fence/);
    expect(() => program.purgeMachine(-1)).toThrow(/outside the fence/);
  });
});

describe('netlock purge: the fence', () => {
  it('late acquire, release and notify of the purged machine are dropped; the queue is untouched', () => {
    const { sw, program, acquire, release, send } = setup();
    acquire(DEAD, 'exclusive');
    acquire(1, 'exclusive');
    acquire(2, 'exclusive');
    program.purgeMachine(DEAD);
    const before = program.queueState(LOCK);
    // A paused process resumes: its release would otherwise dequeue 1's entry and grant 2 beside 1.
    expect(release(DEAD, 'exclusive')).toEqual([{ kind: 'drop', reason: 'fenced' }]);
    expect(acquire(DEAD, 'exclusive')).toEqual([{ kind: 'drop', reason: 'fenced' }]);
    expect(send('notify', DEAD, 'shared', { incarnation: 1 })).toEqual([{ kind: 'drop', reason: 'fenced' }]);
    expect(program.queueState(LOCK)).toEqual(before);
    expect(sw.counters().decisions['fenced']).toBe(3);
    expect(program.isFenced(DEAD)).toBe(true);
    expect(program.isFenced(1)).toBe(false);
    // Cold locks are not the switch's: they still route to the lock server, which fences on its own.
    const cold = sw.ingest({ type: 'acquire', lock: 99, machine: DEAD, task: 0, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0, dst: SERVER }, DEAD);
    expect(cold).toMatchObject([{ kind: 'unicast', machine: SERVER }]);
  });

  it('a new allocation (the next run) lifts the fence', () => {
    const { program, acquire } = setup();
    program.purgeMachine(DEAD);
    program.install([{ lock: LOCK, base: 0, size: 8 }]);
    expect(program.isFenced(DEAD)).toBe(false);
    expect(granted(acquire(DEAD, 'exclusive'))).toEqual([DEAD]);
  });

  it('a switch reset lifts it too (every register back to its initial value)', () => {
    const { sw, program } = setup();
    program.purgeMachine(DEAD);
    sw.restart();
    expect(program.isFenced(DEAD)).toBe(false);
  });
});

describe('netlock purge: mutants the tests must catch', () => {
  it('purge without the grant leaves the next waiter stuck (no grant, and no release can grant it)', () => {
    const { program, acquire, release } = setup({ mutantPurgeWithoutGrant: true });
    acquire(DEAD, 'exclusive');
    acquire(1, 'exclusive');
    acquire(2, 'exclusive');
    const result = program.purgeMachine(DEAD);
    // What the first test of this file asserts fails here:
    expect(result.grants).toEqual([]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 0 });
    // Nobody holds the lock, so nobody releases: 1 (and 2 behind it) wait forever. A stray release
    // (the only thing that could move the queue) would be a protocol error, and it grants 2 over 1.
    expect(granted(release(2, 'exclusive'))).toEqual([2]);
  });

  it('purge without the fence lets a late release of the dead machine dequeue a survivor’s hold', () => {
    const { program, acquire, release } = setup({ mutantPurgeWithoutFence: true });
    acquire(DEAD, 'exclusive');
    acquire(1, 'exclusive');
    acquire(2, 'exclusive');
    expect(program.purgeMachine(DEAD).grants.map((g) => g.dst)).toEqual([1]);
    // 1 holds; the dead machine's late release is taken as 1's: 2 is granted while 1 holds.
    expect(granted(release(DEAD, 'exclusive'))).toEqual([2]);
  });
});
