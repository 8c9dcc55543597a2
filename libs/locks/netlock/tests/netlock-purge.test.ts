import type { LockMode, LockPacket } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { Switch } from '@lockfabric/switch';
import type { EgressAction } from '@lockfabric/switch';
import { NETLOCK_FLAG_CONTINUE, NETLOCK_FLAG_RELEASED, NETLOCK_FLAG_SWITCH, NETLOCK_MAX_RUN, netlockProgram } from '../src/index.js';
import type { NetLockProgramOptions } from '../src/index.js';

// The purge of a dead machine's NetLock switch-queue entries (control plane) and the fence that
// keeps its late packets out. Lock 7 is hot with a queue of 8 slots; machine 9 is the lock server.
const LOCK = 7;
const SERVER = 9;
const DEAD = 3;

function setup(options: NetLockProgramOptions = {}, size = 8) {
  const program = netlockProgram({ slotBudget: 256, allocation: [{ lock: LOCK, base: 0, size }], ...options });
  const sw = new Switch(program);
  let rid = 0;
  // The slot tag of each machine's grants not yet released, oldest first: a release names it, as
  // the NetLock client does (withSlotEcho).
  const tags = new Map<number, number[]>();
  const note = (machine: number, tag: number) => tags.set(machine, [...(tags.get(machine) ?? []), tag]);
  const send = (type: LockPacket['type'], machine: number, mode: LockMode, extra: Partial<LockPacket> = {}): EgressAction[] => {
    const actions = sw.ingest({ type, lock: LOCK, machine, task: 0, mode, incarnation: 0, seq: extra.seq ?? ++rid, flags: 0, dst: SERVER, ...extra }, machine);
    for (const a of actions) if (a.kind === 'unicast' && a.packet.type === 'grant') note(a.machine, a.packet.incarnation);
    return actions;
  };
  const acquire = (machine: number, mode: LockMode) => send('acquire', machine, mode);
  const release = (machine: number, mode: LockMode) => send('release', machine, mode, { incarnation: tags.get(machine)?.shift() ?? 0 });
  const purge = (machine: number) => {
    const result = program.purgeMachine(machine);
    for (const grant of result.grants) note(grant.dst ?? -1, grant.incarnation);
    return result;
  };
  return { sw, program, acquire, release, send, purge };
}

/** The actions without the switch's ACK of a RELEASE (every release gets one; see 'acknowledged, and counted once'). */
function withoutAck(actions: readonly EgressAction[]): EgressAction[] {
  return actions.filter((a) => !(a.kind === 'unicast' && a.packet.type === 'ack'));
}

/** Machines a list of egress actions grants the lock to. */
function granted(actions: readonly EgressAction[]): number[] {
  return actions.flatMap((a) => (a.kind === 'unicast' && a.packet.type === 'grant' ? [a.machine] : []));
}

describe('netlock purge: a dead machine’s queue entries', () => {
  it('dead exclusive holder at the head: removed, the next exclusive waiter is granted', () => {
    const { program, acquire, release, purge } = setup();
    expect(granted(acquire(DEAD, 'exclusive'))).toEqual([DEAD]);
    expect(granted(acquire(1, 'exclusive'))).toEqual([]);
    expect(granted(acquire(2, 'exclusive'))).toEqual([]);
    const result = purge(DEAD);
    expect(result).toMatchObject({ removed: 1, removedHolders: 1, locks: [LOCK], wasFenced: false });
    expect(result.grants.map((g) => [g.dst, g.mode, g.type, g.flags])).toEqual([[1, 'exclusive', 'grant', NETLOCK_FLAG_SWITCH]]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 1, released: 0, tailExclusive: true });
    // The queue goes on as before: 1 releases, 2 is granted, 2 releases, the queue is empty.
    expect(granted(release(1, 'exclusive'))).toEqual([2]);
    expect(granted(release(2, 'exclusive'))).toEqual([]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 0, granted: 0, released: 0, tailExclusive: false });
  });

  it('dead waiter in the middle: removed without a grant; the holder’s release skips it', () => {
    const { program, acquire, release, purge } = setup();
    acquire(1, 'exclusive');
    acquire(DEAD, 'exclusive');
    acquire(2, 'shared');
    const result = purge(DEAD);
    expect(result).toMatchObject({ removed: 1, removedHolders: 0, grants: [] });
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 1, tailExclusive: false });
    expect(granted(release(1, 'exclusive'))).toEqual([2]);
  });

  it('dead holder before a run of shared waiters: the whole run is granted, up to the next writer', () => {
    const { program, acquire, release, purge } = setup();
    acquire(DEAD, 'exclusive');
    acquire(1, 'shared');
    acquire(2, 'shared');
    acquire(4, 'shared');
    acquire(5, 'exclusive');
    acquire(6, 'shared');
    const result = purge(DEAD);
    expect(result.grants.map((g) => [g.dst, g.mode])).toEqual([
      [1, 'shared'],
      [2, 'shared'],
      [4, 'shared'],
    ]);
    // No CONTINUE: the purge granted the run itself, nobody has to reflect a notify.
    expect(result.grants.every((g) => (g.flags & NETLOCK_FLAG_CONTINUE) === 0)).toBe(true);
    expect(program.queueState(LOCK)).toMatchObject({ count: 5, granted: 3, released: 0, tailExclusive: false });
    release(1, 'shared');
    release(2, 'shared');
    expect(granted(release(4, 'shared'))).toEqual([5]);
    expect(granted(release(5, 'exclusive'))).toEqual([6]);
  });

  it('dead reader inside a granted shared run: counted as released, survivors keep holding, the writer waits for them', () => {
    const { program, acquire, release, purge } = setup();
    acquire(1, 'shared');
    acquire(DEAD, 'shared');
    acquire(2, 'shared');
    acquire(5, 'exclusive');
    expect(program.queueState(LOCK)).toMatchObject({ count: 4, granted: 3 });
    const result = purge(DEAD);
    expect(result).toMatchObject({ removed: 1, removedHolders: 1, grants: [] });
    // Its slot stays in the run, marked released: the run's slots never move while survivors hold.
    expect(program.queueState(LOCK)).toMatchObject({ count: 4, granted: 3, released: 1, tailExclusive: true });
    expect(granted(release(1, 'shared'))).toEqual([]);
    expect(granted(release(2, 'shared'))).toEqual([5]);
  });

  it('a dead reader that never reflected its CONTINUE notify: the stranded readers behind it are granted', () => {
    const { program, acquire, release, purge } = setup();
    acquire(4, 'exclusive');
    acquire(DEAD, 'shared');
    acquire(1, 'shared');
    acquire(2, 'shared');
    const handover = release(4, 'exclusive');
    expect(withoutAck(handover).map((a) => (a.kind === 'unicast' ? [a.machine, (a.packet.flags & NETLOCK_FLAG_CONTINUE) !== 0] : a.kind))).toEqual([[DEAD, true]]);
    // DEAD dies before it sends the notify that would grant 1 (and 1's would grant 2).
    const result = purge(DEAD);
    expect(result.grants.map((g) => g.dst)).toEqual([1, 2]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 2, released: 0, tailExclusive: false });
  });

  it('a lock queued only by the dead machine: emptied, and free for the next acquire', () => {
    const { program, acquire, purge } = setup();
    acquire(DEAD, 'exclusive');
    acquire(DEAD, 'exclusive');
    expect(purge(DEAD)).toMatchObject({ removed: 2, removedHolders: 1, grants: [] });
    expect(program.queueState(LOCK)).toMatchObject({ count: 0, granted: 0, tailExclusive: false });
    expect(granted(acquire(1, 'exclusive'))).toEqual([1]);
  });

  it('compaction across the circular buffer’s wrap keeps queue order', () => {
    const { program, acquire, release, purge } = setup();
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
    expect(purge(DEAD)).toMatchObject({ removed: 2, grants: [] });
    expect(granted(release(1, 'exclusive'))).toEqual([2]);
    expect(granted(release(2, 'exclusive'))).toEqual([4]);
    expect(granted(release(4, 'exclusive'))).toEqual([]);
  });

  it('is idempotent: a second purge removes and grants nothing, and says the machine was fenced', () => {
    const { program, acquire, purge } = setup();
    acquire(DEAD, 'exclusive');
    acquire(1, 'exclusive');
    expect(purge(DEAD).grants).toHaveLength(1);
    expect(purge(DEAD)).toMatchObject({ removed: 0, grants: [], locks: [], wasFenced: true });
    expect(program.queueState(LOCK)).toMatchObject({ count: 1, granted: 1 });
  });

  it('out-of-range machine ids are a control error, not a crash', () => {
    const { program } = setup({ maxMachines: 16 });
    expect(() => program.purgeMachine(16)).toThrow(/outside the fence/);
    expect(() => program.purgeMachine(-1)).toThrow(/outside the fence/);
  });
});

describe('netlock release: readers release in any order', () => {
  it('a release marks the slot it names; the run leaves the queue when its last holder releases', () => {
    const { program, acquire, release } = setup();
    acquire(1, 'shared');
    acquire(2, 'shared');
    acquire(4, 'shared');
    acquire(5, 'exclusive');
    expect(granted(release(2, 'shared'))).toEqual([]);
    expect(granted(release(4, 'shared'))).toEqual([]);
    expect(program.queueState(LOCK)).toMatchObject({ head: 0, count: 4, granted: 3, released: 2 });
    expect(granted(release(1, 'shared'))).toEqual([5]);
    expect(program.queueState(LOCK)).toMatchObject({ head: 3, count: 1, granted: 1, released: 0, tailExclusive: true });
  });

  it('the reader behind a dead head reader released first: the purge ends the run and grants the writer', () => {
    const { program, acquire, release, purge } = setup();
    acquire(DEAD, 'shared');
    acquire(1, 'shared');
    acquire(2, 'exclusive');
    release(1, 'shared');
    expect(purge(DEAD)).toMatchObject({ removed: 1, removedHolders: 1 });
    expect(program.queueState(LOCK)).toMatchObject({ count: 1, granted: 1 });
  });

  it('a dead reader released before the reader ahead of it: the purge finds no hold of it, the writer waits for the survivor', () => {
    const { acquire, release, purge } = setup();
    acquire(1, 'shared');
    acquire(DEAD, 'shared');
    acquire(2, 'exclusive');
    release(DEAD, 'shared');
    expect(purge(DEAD)).toMatchObject({ removed: 0, removedHolders: 0, grants: [] });
    expect(granted(release(1, 'shared'))).toEqual([2]);
  });

  it('mutant: the positional release (old code) loses the dead reader’s hold, or grants the writer beside a reader', () => {
    const stuck = setup({ mutantPositionalRelease: true });
    stuck.acquire(DEAD, 'shared');
    stuck.acquire(1, 'shared');
    stuck.acquire(2, 'exclusive');
    stuck.release(1, 'shared'); // pops the dead reader's entry, leaves 1's naming the run
    expect(stuck.purge(DEAD)).toMatchObject({ removed: 0, grants: [] });
    expect(stuck.program.queueState(LOCK)).toMatchObject({ count: 2, granted: 1 }); // held by nobody alive, forever

    const unsafe = setup({ mutantPositionalRelease: true });
    unsafe.acquire(1, 'shared');
    unsafe.acquire(DEAD, 'shared');
    unsafe.acquire(2, 'exclusive');
    unsafe.release(DEAD, 'shared'); // pops 1's entry
    expect(unsafe.purge(DEAD).grants.map((g) => g.dst)).toEqual([2]); // while 1 still reads
  });

  it('a release naming a slot outside the run, or with nothing granted, is stale; one without a tag is counted', () => {
    const { program, acquire, release, send } = setup();
    acquire(1, 'exclusive');
    acquire(2, 'exclusive');
    expect(withoutAck(send('release', 2, 'exclusive', { incarnation: 2 }))).toEqual([{ kind: 'drop', reason: 'release-stale' }]);
    expect(withoutAck(send('release', 2, 'exclusive', { incarnation: 99 }))).toEqual([{ kind: 'drop', reason: 'release-stale' }]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 1 });
    expect(granted(send('release', 1, 'exclusive'))).toEqual([2]);
    release(2, 'exclusive');
    expect(withoutAck(release(1, 'exclusive'))).toEqual([{ kind: 'drop', reason: 'release-stale' }]);
  });

  it(`a granted run holds at most ${NETLOCK_MAX_RUN} readers (the released counter's width); the next waits for the next run`, () => {
    const { program, acquire, release } = setup({}, 200);
    for (let m = 0; m < NETLOCK_MAX_RUN; m++) expect(granted(acquire(100 + m, 'shared'))).toEqual([100 + m]);
    expect(granted(acquire(99, 'shared'))).toEqual([]);
    expect(program.queueState(LOCK)).toMatchObject({ count: NETLOCK_MAX_RUN + 1, granted: NETLOCK_MAX_RUN });
    for (let m = 1; m < NETLOCK_MAX_RUN; m++) release(100 + m, 'shared');
    expect(program.queueState(LOCK)).toMatchObject({ released: NETLOCK_MAX_RUN - 1 });
    expect(granted(release(100, 'shared'))).toEqual([99]);
  });
});

describe('netlock purge: the fence', () => {
  it('late acquire, release and notify of the purged machine are dropped; the queue is untouched', () => {
    const { sw, program, acquire, release, send, purge } = setup();
    acquire(DEAD, 'exclusive');
    acquire(1, 'exclusive');
    acquire(2, 'exclusive');
    purge(DEAD);
    const before = program.queueState(LOCK);
    // A paused process resumes: its packets never reach the queue state (mutant below for what a
    // late release does without the fence).
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
    const { program, acquire, purge } = setup();
    purge(DEAD);
    program.install([{ lock: LOCK, base: 0, size: 8 }]);
    expect(program.isFenced(DEAD)).toBe(false);
    expect(granted(acquire(DEAD, 'exclusive'))).toEqual([DEAD]);
  });

  it('a switch reset lifts it too (every register back to its initial value)', () => {
    const { sw, program, purge } = setup();
    purge(DEAD);
    sw.restart();
    expect(program.isFenced(DEAD)).toBe(false);
  });
});

describe('netlock purge: mutants the tests must catch', () => {
  it('purge without the grant leaves the next waiter stuck (no grant, and no release can grant it)', () => {
    const { program, acquire, release, purge } = setup({ mutantPurgeWithoutGrant: true });
    acquire(DEAD, 'exclusive');
    acquire(1, 'exclusive');
    acquire(2, 'exclusive');
    const result = purge(DEAD);
    // What the first test of this file asserts fails here:
    expect(result.grants).toEqual([]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 0 });
    // Nobody holds the lock, so nobody releases: 1 (and 2 behind it) wait forever. Even a stray
    // release (a protocol error) cannot move the queue: with nothing granted it is stale.
    expect(withoutAck(release(2, 'exclusive'))).toEqual([{ kind: 'drop', reason: 'release-stale' }]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 2, granted: 0 });
  });

  // The purge also clears the dead hold's slot serial, which by itself refuses the late release
  // (a release counts only while its slot holds its entry). With that check the old one too
  // (`mutantLastReleasedOnly`), only the fence stood between the late release and the run.
  it('purge without the fence, and without the live-serial check: a late release of the dead machine ends a run survivors still hold', () => {
    const { acquire, release, purge } = setup({ mutantPurgeWithoutFence: true, mutantLastReleasedOnly: true });
    acquire(1, 'shared');
    acquire(DEAD, 'shared');
    acquire(2, 'shared');
    acquire(4, 'exclusive');
    expect(purge(DEAD)).toMatchObject({ removedHolders: 1, grants: [] });
    // A paused process resumes and releases what the purge already counted: counted twice, so 1's
    // release ends the run while 2 still reads, and the writer is granted beside 2.
    expect(granted(release(DEAD, 'shared'))).toEqual([]);
    expect(granted(release(1, 'shared'))).toEqual([4]);
  });

  it('purge without the fence: the late release is still refused by its slot, and the writer waits for 2', () => {
    const { acquire, release, purge } = setup({ mutantPurgeWithoutFence: true });
    acquire(1, 'shared');
    acquire(DEAD, 'shared');
    acquire(2, 'shared');
    acquire(4, 'exclusive');
    purge(DEAD);
    expect(withoutAck(release(DEAD, 'shared'))).toEqual([{ kind: 'drop', reason: 'release-repeat' }]);
    expect(granted(release(1, 'shared'))).toEqual([]);
    expect(granted(release(2, 'shared'))).toEqual([4]);
  });
});

describe('netlock release: acknowledged, and counted once', () => {
  const acks = (actions: readonly EgressAction[]) =>
    actions.flatMap((a) => (a.kind === 'unicast' && a.packet.type === 'ack' ? [[a.machine, a.packet.seq, a.packet.flags === (NETLOCK_FLAG_SWITCH | NETLOCK_FLAG_RELEASED)]] : []));

  it('every release is acknowledged to its sender with its request id: counted, handover, emptied and stale', () => {
    const { acquire, send } = setup();
    const tagOf = (actions: readonly EgressAction[]) => actions.flatMap((a) => (a.kind === 'unicast' && a.packet.type === 'grant' ? [a.packet.incarnation] : []))[0] ?? 0;
    const t1 = tagOf(acquire(1, 'shared'));
    const t2 = tagOf(acquire(2, 'shared'));
    acquire(4, 'exclusive');
    expect(acks(send('release', 1, 'shared', { seq: 101, incarnation: t1 }))).toEqual([[1, 101, true]]); // counted
    const handover = send('release', 2, 'shared', { seq: 102, incarnation: t2 });
    expect(granted(handover)).toEqual([4]);
    expect(acks(handover)).toEqual([[2, 102, true]]);
    expect(acks(send('release', 2, 'shared', { seq: 103, incarnation: 99 }))).toEqual([[2, 103, true]]); // stale
  });

  it('a repeated reader release is acknowledged but not counted: the writer waits for the last reader', () => {
    const { program, acquire, send } = setup();
    const grants = [1, 2, 5].map((m) => acquire(m, 'shared').find((a) => a.kind === 'unicast')!);
    acquire(4, 'exclusive');
    const tag = (i: number) => (grants[i]!.kind === 'unicast' ? grants[i]!.packet.incarnation : 0);
    send('release', 1, 'shared', { incarnation: tag(0) });
    const repeat = send('release', 1, 'shared', { incarnation: tag(0) });
    expect(withoutAck(repeat)).toEqual([{ kind: 'drop', reason: 'release-repeat' }]);
    expect(acks(repeat)).toHaveLength(1);
    expect(program.queueState(LOCK)).toMatchObject({ granted: 3, released: 1 });
    expect(granted(send('release', 2, 'shared', { incarnation: tag(1) }))).toEqual([]);
    expect(granted(send('release', 5, 'shared', { incarnation: tag(2) }))).toEqual([4]);
  });

  it('a repeat of the last holder’s release, after its slot holds a new entry, leaves the new holder alone', () => {
    const { program, acquire, send } = setup({}, 1);
    const first = acquire(1, 'exclusive').find((a) => a.kind === 'unicast');
    const tag = first?.kind === 'unicast' ? first.packet.incarnation : 0;
    send('release', 1, 'exclusive', { incarnation: tag });
    expect(granted(acquire(2, 'exclusive'))).toEqual([2]); // same slot, next serial
    expect(withoutAck(send('release', 1, 'exclusive', { incarnation: tag }))).toEqual([{ kind: 'drop', reason: 'release-repeat' }]);
    expect(program.queueState(LOCK)).toMatchObject({ count: 1, granted: 1 });
  });

  it('mutant: counting repeats, a resent reader release ends the run early and grants the writer beside a reader', () => {
    const { acquire, send } = setup({ mutantCountDuplicateRelease: true });
    const grants = [1, 2, 5].map((m) => acquire(m, 'shared').find((a) => a.kind === 'unicast')!);
    acquire(4, 'exclusive');
    const tag = (i: number) => (grants[i]!.kind === 'unicast' ? grants[i]!.packet.incarnation : 0);
    send('release', 1, 'shared', { incarnation: tag(0) });
    send('release', 1, 'shared', { incarnation: tag(0) });
    expect(granted(send('release', 2, 'shared', { incarnation: tag(1) }))).toEqual([4]); // while 5 still reads
  });

  it('mutant: counting repeats, a late repeat of the last release takes the next holder’s entry out', () => {
    const { program, acquire, send } = setup({ mutantCountDuplicateRelease: true }, 1);
    const first = acquire(1, 'exclusive').find((a) => a.kind === 'unicast');
    const tag = first?.kind === 'unicast' ? first.packet.incarnation : 0;
    send('release', 1, 'exclusive', { incarnation: tag });
    acquire(2, 'exclusive');
    send('release', 1, 'exclusive', { incarnation: tag });
    expect(program.queueState(LOCK)).toMatchObject({ count: 0, granted: 0 });
    expect(granted(acquire(3, 'exclusive'))).toEqual([3]); // while 2 still writes
  });
});
