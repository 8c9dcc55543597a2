import type { LockPacket, LockMode } from '@lockfabric/ports';
import type { EgressAction } from '../../egress.js';
import { SwitchControlError } from '../../errors.js';
import type { MatchTable, TableValue } from '../../match-table.js';
import type { PacketContext } from '../../packet-context.js';
import type { Pipeline } from '../../pipeline.js';
import type { SwitchProgram } from '../../program.js';
import type { RegisterArray } from '../../register-array.js';
import type { QueueAllocation } from './allocation.js';

/** Packet flags shared with the NetLock client (same bits as the server lock managers' wire). */
export const NETLOCK_FLAG_CANCEL = 1 << 0;
export const NETLOCK_FLAG_SWITCH = 1 << 1;
export const NETLOCK_FLAG_CONTINUE = 1 << 2;

export const NETLOCK_HOT_TABLE = 'netlock.hot';
export const NETLOCK_QSTATE = 'netlock.qstate';
export const NETLOCK_QMODE = 'netlock.qmode';
export const NETLOCK_QMACHINE = 'netlock.qmachine';
export const NETLOCK_QTASK = 'netlock.qtask';
export const NETLOCK_QRID = 'netlock.qrid';
const NOTIFY_ORDER = 'netlock.notify';

export interface NetLockProgramOptions {
  /** Total queue slots in switch memory (shared by all hot locks); default 4096. */
  readonly slotBudget?: number;
  /** Hot locks the switch may hold at most; default 4096. */
  readonly maxHotLocks?: number;
  /** Installed at build time (the knapsack allocation of a pre-run profile). */
  readonly allocation?: readonly QueueAllocation[];
  /** Test-only mutant: a recirculated notify grants the next waiter without checking it is shared. */
  readonly mutantNotifyIgnoresMode?: boolean;
}

/** Per-hot-lock queue state, packed in one 32-bit register so one ALU pass updates it. */
export interface QueueState {
  readonly head: number;
  readonly count: number;
  /** Entries at the head already granted (a single writer, or a run of readers). */
  readonly granted: number;
  /** Exclusive entries anywhere in the queue. */
  readonly exclusive: number;
}

export function packQueueState(s: QueueState): number {
  return (s.head | (s.count << 8) | (s.granted << 16) | (s.exclusive << 24)) >>> 0;
}

export function unpackQueueState(word: number): QueueState {
  return { head: word & 0xff, count: (word >>> 8) & 0xff, granted: (word >>> 16) & 0xff, exclusive: (word >>> 24) & 0xff };
}

/** Table value of a hot lock: [hot index, first slot, queue size]. */
type HotEntry = readonly [number, number, number];

export interface NetLockProgram extends SwitchProgram {
  /** Control plane: replaces the hot-lock table (queues must be empty, e.g. before a run). */
  install(allocation: readonly QueueAllocation[]): void;
  queueState(lock: number): QueueState | undefined;
}

/**
 * NetLock's data plane: per-hot-lock FIFO queues of requests in register arrays (a circular buffer
 * per lock inside shared slot arrays, sized by the knapsack allocation); other locks' packets are
 * routed to their `dst` (the lock server). ACQUIRE enqueues and is granted at once when the queue
 * was empty, or when shared and no writer is queued; a full queue answers PUSH-BACK (the client
 * backs off and retries). RELEASE dequeues the head and grants the new head when no granted
 * entry remains. The model has no recirculation port, so a shared grant whose successors may also
 * be shared carries CONTINUE plus the next slot, and the grantee reflects a NOTIFY that visits the
 * slot arrays before the queue state (declared stage order) to grant that slot if it is shared.
 */
export function netlockProgram(options: NetLockProgramOptions = {}): NetLockProgram {
  const slotBudget = options.slotBudget ?? 4096;
  const maxHot = options.maxHotLocks ?? 4096;
  let arrays: { qstate: RegisterArray; qmode: RegisterArray; qmachine: RegisterArray; qtask: RegisterArray; qrid: RegisterArray; hot: MatchTable<TableValue> } | undefined;
  const built = () => {
    if (!arrays) throw new SwitchControlError('the netlock program has not been built into a switch');
    return arrays;
  };
  const install = (allocation: readonly QueueAllocation[]) => {
    const { hot, qstate } = built();
    if (allocation.length > maxHot) throw new SwitchControlError(`netlock: ${allocation.length} hot locks exceed maxHotLocks ${maxHot}`);
    hot.clear();
    allocation.forEach((a, index) => {
      if (a.size < 1 || a.size > 255 || a.base < 0 || a.base + a.size > slotBudget) {
        throw new SwitchControlError(`netlock: queue of lock ${a.lock} [${a.base}, ${a.base + a.size}) does not fit ${slotBudget} slots of at most 255`);
      }
      hot.setEntry(a.lock, [index, a.base, a.size]);
    });
    qstate.fill(0);
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
      if (packet.type === 'acquire') return acquire(ctx, a, packet, index, base, size);
      if (packet.type === 'release') {
        if ((packet.flags & NETLOCK_FLAG_CANCEL) !== 0) {
          // A queued switch entry cannot be withdrawn: tell the client to release it once granted.
          ctx.decide('cancel-deferred');
          return [{ kind: 'bounce', packet: { ...packet, type: 'ack', flags: NETLOCK_FLAG_SWITCH, dst: packet.machine } }];
        }
        return release(ctx, a, packet, index, base, size);
      }
      return notify(ctx, a, packet, index, base, size, options.mutantNotifyIgnoresMode === true);
    },
    install,
    queueState(lock: number): QueueState | undefined {
      const a = built();
      const hit = a.hot.lookup(lock) as HotEntry | undefined;
      return hit ? unpackQueueState(a.qstate.get(hit[0])) : undefined;
    },
  };
}

type Arrays = { qstate: RegisterArray; qmode: RegisterArray; qmachine: RegisterArray; qtask: RegisterArray; qrid: RegisterArray };

function grantPacket(lock: number, mode: LockMode, machine: number, task: number, rid: number, nextSlot: number, more: boolean, trace: LockPacket['trace']): LockPacket {
  const packet: LockPacket = {
    type: 'grant',
    lock,
    machine,
    task,
    mode,
    incarnation: nextSlot,
    seq: rid,
    flags: NETLOCK_FLAG_SWITCH | (more ? NETLOCK_FLAG_CONTINUE : 0),
    dst: machine,
  };
  return trace ? { ...packet, trace } : packet;
}

function acquire(ctx: PacketContext, a: Arrays, packet: LockPacket, index: number, base: number, size: number): EgressAction[] {
  const exclusive = packet.mode === 'exclusive';
  const decision = ctx.update(a.qstate, index, (word) => {
    const s = unpackQueueState(word);
    if (s.count >= size) return { next: word, out: { full: true, grant: false, pos: 0 } };
    // Shared joins at once only when every queued entry is granted, so granted entries stay a prefix.
    const grant = s.count === 0 || (!exclusive && s.exclusive === 0 && s.granted === s.count);
    const next = { head: s.head, count: s.count + 1, granted: s.granted + (grant ? 1 : 0), exclusive: s.exclusive + (exclusive ? 1 : 0) };
    return { next: packQueueState(next), out: { full: false, grant, pos: (s.head + s.count) % size } };
  });
  if (decision.full) {
    ctx.decide('push-back');
    return [{ kind: 'unicast', machine: packet.machine, packet: { ...packet, type: 'push-back', flags: NETLOCK_FLAG_SWITCH, dst: packet.machine } }];
  }
  const slot = base + decision.pos;
  if (exclusive) ctx.set(a.qmode, slot);
  else ctx.clear(a.qmode, slot);
  ctx.write(a.qmachine, slot, packet.machine);
  ctx.write(a.qtask, slot, packet.task);
  ctx.write(a.qrid, slot, packet.seq);
  if (!decision.grant) {
    ctx.decide('queued');
    return [{ kind: 'drop', reason: 'queued' }];
  }
  ctx.decide('grant-switch');
  return [{ kind: 'unicast', machine: packet.machine, packet: grantPacket(packet.lock, packet.mode, packet.machine, packet.task, packet.seq, base + ((decision.pos + 1) % size), false, packet.trace) }];
}

function release(ctx: PacketContext, a: Arrays, packet: LockPacket, index: number, base: number, size: number): EgressAction[] {
  const exclusive = packet.mode === 'exclusive';
  const decision = ctx.update(a.qstate, index, (word) => {
    const s = unpackQueueState(word);
    if (s.count === 0) return { next: word, out: { stale: true, grantHead: false, head: 0, more: false } };
    const head = (s.head + 1) % size;
    const count = s.count - 1;
    let granted = Math.max(0, s.granted - 1);
    const grantHead = granted === 0 && count > 0;
    if (grantHead) granted = 1;
    const next = { head, count, granted, exclusive: Math.max(0, s.exclusive - (exclusive ? 1 : 0)) };
    return { next: packQueueState(next), out: { stale: false, grantHead, head, more: count > 1 } };
  });
  if (decision.stale) {
    ctx.decide('release-empty');
    return [{ kind: 'drop', reason: 'release-empty' }];
  }
  if (!decision.grantHead) {
    ctx.decide('released');
    return [{ kind: 'drop', reason: 'released' }];
  }
  const slot = base + decision.head;
  const mode: LockMode = ctx.read(a.qmode, slot) === 1 ? 'exclusive' : 'shared';
  const machine = ctx.read(a.qmachine, slot);
  const task = ctx.read(a.qtask, slot);
  const rid = ctx.read(a.qrid, slot);
  ctx.decide('grant-handover');
  const more = mode === 'shared' && decision.more;
  return [{ kind: 'unicast', machine, packet: grantPacket(packet.lock, mode, machine, task, rid, base + ((decision.head + 1) % size), more, packet.trace) }];
}

function notify(ctx: PacketContext, a: Arrays, packet: LockPacket, index: number, base: number, size: number, ignoreMode: boolean): EgressAction[] {
  const target = packet.incarnation;
  if (!Number.isInteger(target) || target < base || target >= base + size) {
    ctx.decide('notify-bad-slot');
    return [{ kind: 'drop', reason: 'notify-bad-slot' }];
  }
  ctx.useStageOrder(NOTIFY_ORDER);
  const shared = ctx.read(a.qmode, target) === 0;
  const machine = ctx.read(a.qmachine, target);
  const task = ctx.read(a.qtask, target);
  const rid = ctx.read(a.qrid, target);
  const pos = target - base;
  const decision = ctx.update(a.qstate, index, (word) => {
    const s = unpackQueueState(word);
    const next = (s.head + s.granted) % size;
    const grant = s.granted < s.count && pos === next && (shared || ignoreMode) && s.granted > 0;
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
  return [{ kind: 'unicast', machine, packet: grantPacket(packet.lock, mode, machine, task, rid, base + ((pos + 1) % size), decision.more && shared, packet.trace) }];
}
