import { SwitchControlError } from '@lockfabric/switch';
import type { EgressAction, MatchTable, PacketContext, Pipeline, RegisterArray, SwitchProgram, TableValue } from '@lockfabric/switch';
import type { LockPacket, LockMode } from '@lockfabric/ports';
import type { QueueAllocation } from './allocation.js';
import { purgeMachineQueues } from './purge.js';
import { NETLOCK_FLAG_CANCEL, NETLOCK_FLAG_GONE, NETLOCK_FLAG_RELEASED, NETLOCK_FLAG_SWITCH, NETLOCK_MAX_RUN, NETLOCK_MAX_SLOTS, grantPacket, nextSerial, packQueueState, serialOfTag, slotOfTag, slotTag, unpackQueueState } from './queue-state.js';
import { NETLOCK_REQUEST_REGISTERS, requestIndex, requestKey, slotInQueue } from './request-register.js';
import type { RequestPlace } from './request-register.js';
import type { QueueState } from './queue-state.js';
import type { PurgeArrays, PurgeResult } from './purge.js';

export const NETLOCK_HOT_TABLE = 'netlock.hot';
export const NETLOCK_QSTATE = 'netlock.qstate';
export const NETLOCK_QMODE = 'netlock.qmode';
export const NETLOCK_QMACHINE = 'netlock.qmachine';
export const NETLOCK_QTASK = 'netlock.qtask';
export const NETLOCK_QRID = 'netlock.qrid';
/** One bit per queue slot: the granted entry in it released (its run leaves the queue when the last holder does). */
export const NETLOCK_QGONE = 'netlock.qgone';
/** One bit per machine id: set by a purge, the machine's later acquire/release/notify are dropped. */
export const NETLOCK_FENCE = 'netlock.fence';
/** Per hot lock: the serial of its newest queue entry (16 bits, never 0). */
export const NETLOCK_QSERIAL = 'netlock.qserial';
/** Per slot: the serial of the entry in it, read where the slot is granted (handover, notify target). */
export const NETLOCK_QENTRY = 'netlock.qentry';
/** Per slot: the same serial again, read where a notify names the slot as its own (one access per array per packet). */
export const NETLOCK_QENTRY_CHECK = 'netlock.qentrychk';
/**
 * Per slot: the serial of the entry in it until its RELEASE is counted, then 0. A RELEASE counts
 * only when it names that serial: a resent copy, or a late one whose slot holds another entry
 * now, is only acknowledged.
 */
export const NETLOCK_QLIVE = 'netlock.qlive';
/** Per-request register (by machine, task, request id): the key of the request's last try (request-register.ts). */
export const NETLOCK_QCKEY = 'netlock.qckey';
/** Per-request register: the slot tag of that request's entry (0: its last try was pushed back). */
export const NETLOCK_QCTAG = 'netlock.qctag';
const NOTIFY_ORDER = 'netlock.notify';

export interface NetLockProgramOptions {
  /** Total queue slots in switch memory (shared by all hot locks); default 4096. */
  readonly slotBudget?: number;
  /** Hot locks the switch may hold at most; default 4096. */
  readonly maxHotLocks?: number;
  /** Installed at build time (the knapsack allocation of a pre-run profile). */
  readonly allocation?: readonly QueueAllocation[];
  /** Machine ids the fence covers: [0, maxMachines); default 65 536 (the 16-bit queue machine field). */
  readonly maxMachines?: number;
  /** Test-only mutant: a recirculated notify grants the next waiter without checking it is shared. */
  readonly mutantNotifyIgnoresMode?: boolean;
  /** Test-only mutant: a purge removes the dead machine's entries but grants nobody (the next waiter is stuck). */
  readonly mutantPurgeWithoutGrant?: boolean;
  /** Test-only mutant: a purge sets no fence, so the dead machine's late packets re-enter the queues. */
  readonly mutantPurgeWithoutFence?: boolean;
  /**
   * Test-only mutant: the old positional release. Every RELEASE pops the queue head,
   * whoever sent it, so a reader releasing before the reader ahead of it takes that reader's entry
   * out; a purge then no longer finds the dead reader's hold.
   */
  readonly mutantPositionalRelease?: boolean;
  /**
   * Test-only mutant: a notify is not checked against its slot's entry serial, so a CONTINUE
   * notify that its grantee's own RELEASE overtook grants the reader behind whatever entry holds
   * that slot by the time it arrives — behind a writer, too (swarm seed 478; README).
   */
  readonly mutantUncheckedNotify?: boolean;
  /**
   * Test-only mutant: a RELEASE is not checked against the serial last released in its slot, so a
   * resent copy (its ACK was lost) is counted again and can end a shared run that others still hold.
   */
  readonly mutantCountDuplicateRelease?: boolean;
  /**
   * Test-only mutant: the old switch, which does not recognise a request already queued. Every
   * ACQUIRE is queued (a resent or duplicated one twice), and a cancel is only deferred, so a GRANT
   * lost on the way strands its lock (README, "Lost GRANTs and NOTIFYs").
   */
  readonly mutantForgetQueued?: boolean;
  /**
   * Test-only mutant: the older repeat check, which knew only the serial last released in a slot.
   * A RELEASE resent late, after its slot took and released another entry, was counted against the
   * slot's next entry and ended a run its holder still held (swarm seed 1256).
   */
  readonly mutantLastReleasedOnly?: boolean;
}

/** Table value of a hot lock: [hot index, first slot, queue size]. */
type HotEntry = readonly [number, number, number];

export interface NetLockProgram extends SwitchProgram {
  /** Control plane: replaces the hot-lock table, empties every queue and lifts every fence (a new run). */
  install(allocation: readonly QueueAllocation[]): void;
  queueState(lock: number): QueueState | undefined;
  /** Control plane, read only: every hot lock and the machine of each entry in its queue, head first. */
  queueMachines(): ReadonlyMap<number, readonly number[]>;
  /**
   * Control plane, after `machine` was declared dead: fences it (its later acquire, release and
   * notify packets are dropped until the next `install` or register reset), removes every entry it
   * has in any hot-lock queue, and returns the GRANTs the removal makes due. The caller injects
   * them into the pipeline (they carry `dst`, so the program routes them to the grantees).
   * Idempotent: a second call finds nothing to remove and grants nothing.
   */
  purgeMachine(machine: number): PurgeResult;
  /** Whether `machine` is fenced by a purge in this run. */
  isFenced(machine: number): boolean;
  /** Machine ids the fence covers: [0, maxMachines). */
  readonly maxMachines: number;
}

/**
 * NetLock's data plane: per-hot-lock FIFO queues of requests in register arrays (a circular buffer
 * per lock inside shared slot arrays, sized by the knapsack allocation); other locks' packets are
 * routed to their `dst` (the lock server). ACQUIRE enqueues and is granted at once when the queue
 * was empty, or when shared and every entry is a granted reader; a full queue answers PUSH-BACK
 * (the client backs off and retries). The granted entries at the head form the granted run (one
 * writer, or readers). A RELEASE names its own slot (the tag its GRANT carried): it marks that
 * entry released and counts it; the last holder's RELEASE takes the whole run out of the queue
 * and grants the new head. Readers release in any order, so the run's slots stay put, each
 * naming its holder, until the run ends: that is what lets a purge tell which holds were the dead
 * machine's (NetLock README). The model has no recirculation port, so a shared grant whose
 * successors may also be shared carries CONTINUE plus its slot, and the grantee reflects a NOTIFY
 * that visits the slot arrays before the queue state (declared stage order) to grant the next
 * slot if it is shared.
 * After a machine's death the control plane purges its entries (`purgeMachine`, purge.ts) and
 * sets its bit in `netlock.fence`, which every hot-lock packet path reads before the queue state.
 */
export function netlockProgram(options: NetLockProgramOptions = {}): NetLockProgram {
  const slotBudget = options.slotBudget ?? 4096;
  const maxHot = options.maxHotLocks ?? 4096;
  const maxMachines = options.maxMachines ?? 1 << 16;
  if (!(Number.isInteger(slotBudget) && slotBudget >= 1 && slotBudget <= NETLOCK_MAX_SLOTS)) {
    throw new SwitchControlError(`netlock: slotBudget must be an integer in [1, ${NETLOCK_MAX_SLOTS}] (a slot tag has 16 bits), got ${slotBudget}`);
  }
  let arrays: (NetLockArrays & { hot: MatchTable<TableValue> }) | undefined;
  const built = () => {
    if (!arrays) throw new SwitchControlError('the netlock program has not been built into a switch');
    return arrays;
  };
  const install = (allocation: readonly QueueAllocation[]) => {
    const { hot, qstate, qgone, fence, qserial, qentry, qentryCheck, qlive, qckey, qctag } = built();
    if (allocation.length > maxHot) throw new SwitchControlError(`netlock: ${allocation.length} hot locks exceed maxHotLocks ${maxHot}`);
    hot.clear();
    fence.fill(0);
    allocation.forEach((a, index) => {
      if (a.size < 1 || a.size > 255 || a.base < 0 || a.base + a.size > slotBudget) {
        throw new SwitchControlError(`netlock: queue of lock ${a.lock} [${a.base}, ${a.base + a.size}) does not fit ${slotBudget} slots of at most 255`);
      }
      hot.setEntry(a.lock, [index, a.base, a.size]);
    });
    qstate.fill(0);
    qgone.fill(0);
    qserial.fill(0);
    qentry.fill(0);
    qentryCheck.fill(0);
    qlive.fill(0);
    qckey.fill(0);
    qctag.fill(0);
  };

  return {
    name: 'netlock',
    build(pipeline: Pipeline): void {
      arrays = {
        hot: pipeline.addTable(NETLOCK_HOT_TABLE),
        qstate: pipeline.addArray({ name: NETLOCK_QSTATE, width: 32, length: maxHot, stage: 0 }),
        qmode: pipeline.addArray({ name: NETLOCK_QMODE, width: 1, length: slotBudget, stage: 1 }),
        qmachine: pipeline.addArray({ name: NETLOCK_QMACHINE, width: 16, length: slotBudget, stage: 1 }),
        qtask: pipeline.addArray({ name: NETLOCK_QTASK, width: 16, length: slotBudget, stage: 1 }),
        qrid: pipeline.addArray({ name: NETLOCK_QRID, width: 32, length: slotBudget, stage: 1 }),
        qgone: pipeline.addArray({ name: NETLOCK_QGONE, width: 1, length: slotBudget, stage: 1 }),
        // Stage 0 beside qstate: every path reads the fence before it changes the queue state.
        fence: pipeline.addArray({ name: NETLOCK_FENCE, width: 1, length: maxMachines, stage: 0 }),
        qserial: pipeline.addArray({ name: NETLOCK_QSERIAL, width: 16, length: maxHot, stage: 0 }),
        qentry: pipeline.addArray({ name: NETLOCK_QENTRY, width: 16, length: slotBudget, stage: 1 }),
        qentryCheck: pipeline.addArray({ name: NETLOCK_QENTRY_CHECK, width: 16, length: slotBudget, stage: 1 }),
        // Stage 0 beside qstate: a release is recognised as a repeat before it can change the queue state.
        qlive: pipeline.addArray({ name: NETLOCK_QLIVE, width: 16, length: slotBudget, stage: 0 }),
        // Stage 0 beside qstate: a repeat is recognised before the queue state would change.
        qckey: pipeline.addArray({ name: NETLOCK_QCKEY, width: 32, length: NETLOCK_REQUEST_REGISTERS, stage: 0 }),
        qctag: pipeline.addArray({ name: NETLOCK_QCTAG, width: 32, length: NETLOCK_REQUEST_REGISTERS, stage: 0 }),
      };
      const rest = pipeline.maus.map((m) => m.index).filter((s) => s > 1);
      pipeline.declareStageOrder(NOTIFY_ORDER, [1, 0, ...rest], 'a NOTIFY (recirculated grant) reads the queue slot it names, then checks it is the next ungranted entry in the queue state');
      if (options.allocation) install(options.allocation);
    },
    process(packet: LockPacket, _ingress, ctx: PacketContext): EgressAction[] {
      const a = built();
      const hit = a.hot.lookup(packet.lock) as HotEntry | undefined;
      const handled = packet.type === 'acquire' || packet.type === 'release' || packet.type === 'notify';
      if (!hit || !handled) {
        ctx.decide(packet.dst === undefined ? 'no-dst' : 'routed');
        return packet.dst === undefined ? [{ kind: 'drop', reason: 'no-dst' }] : [{ kind: 'unicast', machine: packet.dst, packet }];
      }
      const [index, base, size] = hit;
      // A notify reads its stage-1 slot first (declared order), so its fence check comes inside notify().
      if (packet.type !== 'notify' && fenced(ctx, a, packet)) return fencedDrop(ctx);
      const forgetQueued = options.mutantForgetQueued === true;
      if (packet.type === 'acquire') return acquire(ctx, a, packet, index, base, size, { forgetQueued, lastReleasedOnly: options.mutantLastReleasedOnly === true });
      if (packet.type === 'release') {
        if ((packet.flags & NETLOCK_FLAG_CANCEL) !== 0) {
          if (!forgetQueued) return cancel(ctx, a, packet, index, base, size);
          // The old switch: a queued entry cannot be withdrawn, so the client releases it once granted.
          ctx.decide('cancel-deferred');
          return [{ kind: 'bounce', packet: { ...packet, type: 'ack', flags: NETLOCK_FLAG_SWITCH, dst: packet.machine } }];
        }
        const taken = options.mutantPositionalRelease === true ? releasePositional(ctx, a, packet, index, base, size) : release(ctx, a, packet, index, base, size, { countDuplicates: options.mutantCountDuplicateRelease === true, lastReleasedOnly: options.mutantLastReleasedOnly === true });
        return [...taken, releaseAck(packet)];
      }
      return notify(ctx, a, packet, index, base, size, { ignoreMode: options.mutantNotifyIgnoresMode === true, unchecked: options.mutantUncheckedNotify === true });
    },
    install,
    maxMachines,
    queueState(lock: number): QueueState | undefined {
      const a = built();
      const hit = a.hot.lookup(lock) as HotEntry | undefined;
      return hit ? unpackQueueState(a.qstate.get(hit[0])) : undefined;
    },
    queueMachines(): ReadonlyMap<number, readonly number[]> {
      const a = built();
      const out = new Map<number, readonly number[]>();
      for (const [lock, value] of a.hot.entries().exact) {
        const [index, base, size] = value as HotEntry;
        const s = unpackQueueState(a.qstate.get(index));
        out.set(lock, Array.from({ length: s.count }, (_, i) => a.qmachine.get(base + ((s.head + i) % size))));
      }
      return out;
    },
    purgeMachine(machine: number): PurgeResult {
      const a = built();
      if (!Number.isInteger(machine) || machine < 0 || machine >= maxMachines) {
        throw new SwitchControlError(`netlock: machine ${machine} is outside the fence's [0, ${maxMachines})`);
      }
      const wasFenced = a.fence.get(machine) === 1;
      if (options.mutantPurgeWithoutFence !== true) a.fence.set(machine, 1);
      const queues = a.hot.entries().exact.map(([lock, value]) => {
        const [index, base, size] = value as HotEntry;
        return { lock, index, base, size };
      });
      const result = purgeMachineQueues(a, queues, machine, { emitGrants: options.mutantPurgeWithoutGrant !== true, keepLiveSerials: options.mutantLastReleasedOnly !== true });
      return { ...result, wasFenced };
    },
    isFenced(machine: number): boolean {
      const a = built();
      return Number.isInteger(machine) && machine >= 0 && machine < maxMachines && a.fence.get(machine) === 1;
    },
  };
}

/** NetLock's register arrays (the purge's, plus the per-machine fence and the per-lock serial). */
export interface NetLockArrays extends PurgeArrays {
  readonly fence: RegisterArray;
  readonly qserial: RegisterArray;
  readonly qlive: RegisterArray;
  readonly qckey: RegisterArray;
  readonly qctag: RegisterArray;
}

/** The switch's answer to every RELEASE it takes, repeats and stale ones included: the client resends until it sees one. */
function releaseAck(packet: LockPacket): EgressAction {
  return { kind: 'unicast', machine: packet.machine, packet: { ...packet, type: 'ack', flags: NETLOCK_FLAG_SWITCH | NETLOCK_FLAG_RELEASED, dst: packet.machine } };
}

/** Reads the sender's fence bit; a machine id past the fence cannot be in a queue (16-bit field) and is not fenced. */
function fenced(ctx: PacketContext, a: NetLockArrays, packet: LockPacket): boolean {
  if (!Number.isInteger(packet.machine) || packet.machine < 0 || packet.machine >= a.fence.length) return false;
  return ctx.read(a.fence, packet.machine) === 1;
}

function fencedDrop(ctx: PacketContext): EgressAction[] {
  ctx.decide('fenced');
  return [{ kind: 'drop', reason: 'fenced' }];
}

function acquire(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, index: number, base: number, size: number, mutants: { readonly forgetQueued: boolean; readonly lastReleasedOnly: boolean }): EgressAction[] {
  const { forgetQueued } = mutants;
  const exclusive = packet.mode === 'exclusive';
  const register = requestIndex(packet.machine, packet.task, packet.seq);
  if (!forgetQueued) {
    // The key names this try (the client stamps its push-back count in `incarnation`). Written
    // on every ACQUIRE: a repeat writes the same key, a new request takes the register.
    const key = requestKey(packet.machine, packet.task, packet.seq, packet.incarnation);
    const repeat = ctx.update(a.qckey, register, (old) => ({ next: key, out: old === key }));
    if (repeat) return acquireRepeat(ctx, a, packet, index, base, size, register);
  }
  const decision = ctx.update(a.qstate, index, (word) => {
    const s = unpackQueueState(word);
    if (s.count >= size) return { next: word, out: { full: true, grant: false, pos: 0 } };
    // A reader joins the granted run only when every entry is in it and the run is readers (the
    // tail is then a granted reader), so granted entries stay a prefix.
    const grant = s.count === 0 || (!exclusive && !s.tailExclusive && s.granted === s.count && s.granted < NETLOCK_MAX_RUN);
    const next = { head: s.head, count: s.count + 1, granted: s.granted + (grant ? 1 : 0), released: s.count === 0 ? 0 : s.released, tailExclusive: exclusive };
    return { next: packQueueState(next), out: { full: false, grant, pos: (s.head + s.count) % size } };
  });
  if (decision.full) {
    if (!forgetQueued) ctx.write(a.qctag, register, 0);
    ctx.decide('push-back');
    return [{ kind: 'unicast', machine: packet.machine, packet: { ...packet, type: 'push-back', flags: NETLOCK_FLAG_SWITCH, dst: packet.machine } }];
  }
  const slot = base + decision.pos;
  const serial = ctx.update(a.qserial, index, (word) => {
    const next = nextSerial(word);
    return { next, out: next };
  });
  // Stage 0 still: the request's register now names its entry, and the slot awaits its release.
  if (!forgetQueued) ctx.write(a.qctag, register, slotTag(slot, serial));
  if (!mutants.lastReleasedOnly) ctx.write(a.qlive, slot, serial);
  if (exclusive) ctx.set(a.qmode, slot);
  else ctx.clear(a.qmode, slot);
  ctx.write(a.qmachine, slot, packet.machine);
  ctx.write(a.qtask, slot, packet.task);
  ctx.write(a.qrid, slot, packet.seq);
  ctx.clear(a.qgone, slot);
  ctx.write(a.qentry, slot, serial);
  ctx.write(a.qentryCheck, slot, serial);
  if (!decision.grant) {
    ctx.decide('queued');
    return [{ kind: 'drop', reason: 'queued' }];
  }
  ctx.decide('grant-switch');
  return [{ kind: 'unicast', machine: packet.machine, packet: grantPacket(packet.lock, packet.mode, packet.machine, packet.task, packet.seq, slot, serial, false, packet.trace) }];
}

/**
 * Where the request `packet` names stands, by its register's tag (read in stage 0 with the queue
 * state, then checked in the slot arrays): the entry must lie in the queue and still be this
 * request's (machine, task, request id, serial), or the request is absent.
 */
function locateRequest(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, tag: number, word: number, base: number, size: number): RequestPlace {
  const slot = slotInQueue(tag, base, size);
  if (slot === undefined) return { kind: 'absent' };
  const s = unpackQueueState(word);
  const position = (slot - base - s.head + size) % size;
  if (position >= s.count) return { kind: 'absent' };
  const mine = ctx.read(a.qmachine, slot) === packet.machine && ctx.read(a.qtask, slot) === packet.task && ctx.read(a.qrid, slot) === packet.seq && ctx.read(a.qentry, slot) === serialOfTag(tag);
  if (!mine) return { kind: 'absent' };
  if (position >= s.granted) return { kind: 'waiting', slot };
  if (ctx.read(a.qgone, slot) === 1) return { kind: 'released', slot };
  return { kind: 'granted', slot, lastOfRun: position === s.granted - 1 && s.count > s.granted };
}

/**
 * An ACQUIRE of a request the switch already took (a resend after a lost GRANT, or a duplicate).
 * Granted: send the GRANT again, with CONTINUE when a reader behind may be due (a repeated notify
 * is harmless). Waiting: drop it, the GRANT comes when due. Absent: the last try was pushed back
 * (or the entry is gone), so answer PUSH-BACK and the client tries again as a new attempt.
 */
function acquireRepeat(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, index: number, base: number, size: number, register: number): EgressAction[] {
  const tag = ctx.read(a.qctag, register);
  const place = locateRequest(ctx, a, packet, tag, ctx.read(a.qstate, index), base, size);
  if (place.kind === 'granted') {
    ctx.decide('grant-repeat');
    const more = packet.mode === 'shared' && place.lastOfRun;
    return [{ kind: 'unicast', machine: packet.machine, packet: grantPacket(packet.lock, packet.mode, packet.machine, packet.task, packet.seq, place.slot, serialOfTag(tag), more, packet.trace) }];
  }
  if (place.kind === 'absent') {
    ctx.decide('repeat-push-back');
    // It keeps the try's attempt, as every PUSH-BACK does: the client ignores one for an older try.
    return [{ kind: 'unicast', machine: packet.machine, packet: { ...packet, type: 'push-back', flags: NETLOCK_FLAG_SWITCH, dst: packet.machine } }];
  }
  ctx.decide('acquire-repeat');
  return [{ kind: 'drop', reason: 'acquire-repeat' }];
}

/**
 * A cancel of a request that timed out. A queued entry cannot leave the middle of a queue, so:
 * granted, the GRANT goes again (the client releases it); waiting, an ACK says "deferred" and the
 * client asks again later; absent (never queued, or released), an ACK with GONE ends it. The
 * client keeps asking until a GRANT or GONE, so a lost GRANT costs time, never the lock.
 */
function cancel(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, index: number, base: number, size: number): EgressAction[] {
  const register = requestIndex(packet.machine, packet.task, packet.seq);
  const known = ctx.read(a.qckey, register) === requestKey(packet.machine, packet.task, packet.seq, packet.incarnation);
  const tag = known ? ctx.read(a.qctag, register) : 0;
  const place = locateRequest(ctx, a, packet, tag, ctx.read(a.qstate, index), base, size);
  if (place.kind === 'granted') {
    ctx.decide('cancel-granted');
    return [{ kind: 'unicast', machine: packet.machine, packet: grantPacket(packet.lock, packet.mode, packet.machine, packet.task, packet.seq, place.slot, serialOfTag(tag), false, packet.trace) }];
  }
  const waiting = place.kind === 'waiting';
  ctx.decide(waiting ? 'cancel-deferred' : 'cancel-gone');
  return [{ kind: 'unicast', machine: packet.machine, packet: { ...packet, type: 'ack', incarnation: 0, flags: NETLOCK_FLAG_SWITCH | (waiting ? 0 : NETLOCK_FLAG_GONE), dst: packet.machine } }];
}

/** Where a packet's slot tag points inside this queue: 'none' (no tag), 'foreign' (outside the queue) or the position from `base`. */
function taggedPosition(packet: LockPacket, base: number, size: number): number | 'none' | 'foreign' {
  const slot = slotOfTag(packet.incarnation);
  if (slot === undefined) return 'none';
  return slot >= base && slot < base + size ? slot - base : 'foreign';
}

interface ReleaseOutcome {
  readonly kind: 'stale' | 'counted' | 'handover' | 'emptied';
  /** New head position (handover). */
  readonly head: number;
  /** More entries behind the new head (a reader granted with CONTINUE). */
  readonly more: boolean;
}

/**
 * RELEASE of a granted entry. Not the run's last holder: count it, and mark the slot the release
 * names released (the purge reads the marks; a release without a tag is counted unmarked). The
 * last holder: the whole run leaves the queue, and the new head (if any) is granted, with CONTINUE
 * when a reader may follow it. A release naming a slot outside the run, or arriving when nothing
 * is granted, is stale and dropped.
 */
function release(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, index: number, base: number, size: number, mutants: { readonly countDuplicates: boolean; readonly lastReleasedOnly: boolean }): EgressAction[] {
  const tagged = taggedPosition(packet, base, size);
  // The client resends a RELEASE until acknowledged, so the same one may arrive twice, or late,
  // after its slot took another entry. It counts only while the slot holds its entry unreleased.
  const serial = serialOfTag(packet.incarnation);
  if (typeof tagged === 'number' && serial !== 0) {
    const repeat = ctx.update(a.qlive, base + tagged, (live) => {
      if (mutants.lastReleasedOnly) return { next: serial, out: live === serial };
      return { next: live === serial ? 0 : live, out: live !== serial };
    });
    if (repeat && !mutants.countDuplicates) {
      ctx.decide('release-repeat');
      return [{ kind: 'drop', reason: 'release-repeat' }];
    }
  }
  const decision = ctx.update<ReleaseOutcome>(a.qstate, index, (word) => {
    const s = unpackQueueState(word);
    const outside = tagged === 'foreign' || (typeof tagged === 'number' && (tagged - s.head + size) % size >= s.granted);
    if (s.granted === 0 || outside) return { next: word, out: { kind: 'stale', head: 0, more: false } };
    if (s.released + 1 < s.granted) {
      return { next: packQueueState({ ...s, released: s.released + 1 }), out: { kind: 'counted', head: 0, more: false } };
    }
    const head = (s.head + s.granted) % size;
    const count = s.count - s.granted;
    const next = { head, count, granted: count > 0 ? 1 : 0, released: 0, tailExclusive: count > 0 && s.tailExclusive };
    return { next: packQueueState(next), out: { kind: count > 0 ? 'handover' : 'emptied', head, more: count > 1 } };
  });
  if (decision.kind === 'stale') {
    ctx.decide('release-stale');
    return [{ kind: 'drop', reason: 'release-stale' }];
  }
  if (decision.kind === 'counted') {
    if (typeof tagged === 'number') ctx.set(a.qgone, base + tagged);
    ctx.decide('released');
    return [{ kind: 'drop', reason: 'released' }];
  }
  if (decision.kind === 'emptied') {
    ctx.decide('released');
    return [{ kind: 'drop', reason: 'released' }];
  }
  return handOver(ctx, a, packet, base, decision.head, decision.more);
}

/** Grants the entry at position `head` (the new head after a release), with CONTINUE when a reader may follow. */
function handOver(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, base: number, head: number, more: boolean): EgressAction[] {
  const slot = base + head;
  const mode: LockMode = ctx.read(a.qmode, slot) === 1 ? 'exclusive' : 'shared';
  const machine = ctx.read(a.qmachine, slot);
  const task = ctx.read(a.qtask, slot);
  const rid = ctx.read(a.qrid, slot);
  const serial = ctx.read(a.qentry, slot);
  ctx.decide('grant-handover');
  return [{ kind: 'unicast', machine, packet: grantPacket(packet.lock, mode, machine, task, rid, slot, serial, mode === 'shared' && more, packet.trace) }];
}

/**
 * Test-only mutant (`mutantPositionalRelease`): the old release, which pops the head whoever sent
 * it. Readers releasing out of order then leave the run's slots naming the wrong holders.
 */
function releasePositional(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, index: number, base: number, size: number): EgressAction[] {
  const decision = ctx.update(a.qstate, index, (word) => {
    const s = unpackQueueState(word);
    if (s.count === 0) return { next: word, out: { stale: true, grantHead: false, head: 0, more: false } };
    const head = (s.head + 1) % size;
    const count = s.count - 1;
    let granted = Math.max(0, s.granted - 1);
    const grantHead = granted === 0 && count > 0;
    if (grantHead) granted = 1;
    const next = { head, count, granted, released: 0, tailExclusive: count > 0 && s.tailExclusive };
    return { next: packQueueState(next), out: { stale: false, grantHead, head, more: count > 1 } };
  });
  if (decision.stale || !decision.grantHead) {
    ctx.decide(decision.stale ? 'release-stale' : 'released');
    return [{ kind: 'drop', reason: decision.stale ? 'release-stale' : 'released' }];
  }
  return handOver(ctx, a, packet, base, decision.head, decision.more);
}

/**
 * A reflected NOTIFY names the grantee's slot and entry serial: when that entry still holds the
 * slot, grant the slot after it if it is the next reader in line. The serial check matters because
 * a notify may arrive after its grantee released and the queue moved on: the slot then holds
 * another entry, possibly a writer's, and the slot after it a reader that must wait.
 */
function notify(ctx: PacketContext, a: NetLockArrays, packet: LockPacket, index: number, base: number, size: number, mutants: { readonly ignoreMode: boolean; readonly unchecked: boolean }): EgressAction[] {
  const own = taggedPosition(packet, base, size);
  if (typeof own !== 'number') {
    ctx.decide('notify-bad-slot');
    return [{ kind: 'drop', reason: 'notify-bad-slot' }];
  }
  const pos = (own + 1) % size;
  const target = base + pos;
  ctx.useStageOrder(NOTIFY_ORDER);
  const stale = !mutants.unchecked && ctx.read(a.qentryCheck, base + own) !== serialOfTag(packet.incarnation);
  const shared = ctx.read(a.qmode, target) === 0;
  const machine = ctx.read(a.qmachine, target);
  const task = ctx.read(a.qtask, target);
  const rid = ctx.read(a.qrid, target);
  const serial = ctx.read(a.qentry, target);
  if (fenced(ctx, a, packet)) return fencedDrop(ctx);
  if (stale) {
    ctx.decide('notify-stale');
    return [{ kind: 'drop', reason: 'notify-stale' }];
  }
  const decision = ctx.update(a.qstate, index, (word) => {
    const s = unpackQueueState(word);
    const next = (s.head + s.granted) % size;
    const grant = s.granted > 0 && s.granted < s.count && s.granted < NETLOCK_MAX_RUN && pos === next && (shared || mutants.ignoreMode);
    if (!grant) return { next: word, out: { grant: false, more: false } };
    const after = { ...s, granted: s.granted + 1 };
    return { next: packQueueState(after), out: { grant: true, more: after.granted < after.count } };
  });
  if (!decision.grant) {
    ctx.decide('notify-stale');
    return [{ kind: 'drop', reason: 'notify-stale' }];
  }
  ctx.decide('grant-notify');
  const mode: LockMode = shared ? 'shared' : 'exclusive';
  return [{ kind: 'unicast', machine, packet: grantPacket(packet.lock, mode, machine, task, rid, target, serial, decision.more && shared, packet.trace) }];
}

/** The program is NetLock's (the one check: the catalog, the swarm invariants and the control calls ask it). */
export function isNetLockProgram(program: SwitchProgram | undefined): program is NetLockProgram {
  const p = program as Partial<NetLockProgram> | undefined;
  return p?.name === 'netlock' && typeof p.install === 'function' && typeof p.purgeMachine === 'function' && typeof p.queueMachines === 'function';
}
