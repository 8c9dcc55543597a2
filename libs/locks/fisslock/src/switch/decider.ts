import { ConfigError } from '@lockfabric/ports';
import type { LockMode, LockPacket, NodeId } from '@lockfabric/ports';
import { SwitchControlError } from '@lockfabric/switch';
import type { EgressAction, Ingress, MatchTable, PacketContext, Pipeline, RegisterArray, SplitRegisterArray, SwitchProgram } from '@lockfabric/switch';
import { byteArrayParts, lockCapacity } from './capacity.js';
import {
  FLAG_ABORT,
  FLAG_BOUNCED,
  FLAG_CUR_SHARED,
  FLAG_DUP,
  FLAG_FALLBACK,
  FLAG_GRANTABLE,
  FLAG_GRANTED,
  FLAG_HAS_AGENT,
  FLAG_INVALID,
  FLAG_REACHED,
  FLAG_WW_NEXT,
  MAX_MACHINE_ID,
  ackFlags,
  srcOf,
} from '../wire.js';
import type { AckStatus } from '../wire.js';

/** Read-preferring (paper default), with the starvation bit, or write-preferring with the writer-waiting bit. */
export type FissLockPolicy = 'read-preferring' | 'starvation-prevention' | 'write-preferring';

export interface FissLockDeciderOptions {
  /**
   * Locks decided on the switch; default (and maximum) the capacity from the MAU formula. Higher
   * ids fall back. A positive integer; above the capacity it is cut to the capacity when built.
   */
  readonly lockCount?: number;
  readonly policy?: FissLockPolicy;
  /** Machines running the fallback (ParLock-style) lock managers for out-of-range locks. */
  readonly fallbackNodes?: readonly NodeId[];
  /** Test-only mutant: accept every FREE / transfer GRANT without the incarnation check. */
  readonly mutantNoIncarnationCheck?: boolean;
  /** Test-only mutant: grant ② past {@link INCA_BOUND}, letting the 8-bit inca wrap (the old rule). */
  readonly mutantNoIncaBound?: boolean;
  /** Test-only mutant: drop a bounced ② copy of a free lock without an ACK (the old rule), so its bouncer resends it for ever. */
  readonly mutantSilentStaleCopy?: boolean;
}

/**
 * Most ② grants one lifetime of a lock may take on the switch (FissLock §4.2 incarnation checks,
 * §5.2 inca RA). The decider's inca counts the ② grants since the lifetime began (① or an accepted
 * FREE / transfer reset it to 0), and the agent's count starts at 0 in the same lifetime and only
 * grows, so the decider is at most inca steps ahead of any FREE / transfer it checks. Kept at or
 * below 127 the gap stays under half the 8-bit range: the equality check and the re-refusal check
 * (`incaAhead`, 1–127 steps) never alias. Past it a shared ACQUIRE goes to the agent (③) and queues
 * there until the holders drain; the transfer to that shared run starts a new lifetime at 0. The
 * register keeps its 8 bits (18 per lock); the bound uses 7 of them as the count.
 */
export const INCA_BOUND = 0x7f;

export const FISSLOCK_ARRAYS = { seq: 'fisslock.seq', free: 'fisslock.free', rw: 'fisslock.rw', pref: 'fisslock.pref', mid: 'fisslock.mid', inca: 'fisslock.inca' } as const;
export const FISSLOCK_FALLBACK_TABLE = 'fisslock.fallback-nodes';
const SEQ_SOURCES = 256;

/** Decider state of one lock as the control plane reads it (`mid` is the machine id, undefined for none). */
export interface LockMeta {
  readonly free: boolean;
  readonly mode: LockMode;
  readonly mid: NodeId | undefined;
  readonly inca: number;
  readonly pref: boolean;
}

export interface FissLockDecider extends SwitchProgram {
  readonly policy: FissLockPolicy;
  /** Locks the registers cover (ids below it are decided on the switch). */
  lockCount(): number;
  /** Capacity the MAU formula gives for the pipeline this program was built into. */
  capacity(): number;
  meta(lid: number): LockMeta;
}

interface Arrays {
  seq: RegisterArray;
  free: RegisterArray;
  rw: RegisterArray;
  pref: RegisterArray | undefined;
  mid: SplitRegisterArray;
  inca: SplitRegisterArray;
  fallback: MatchTable;
  lockCount: number;
  capacity: number;
}

type SeqStatus = 'new' | 'dup' | 'gap';

/**
 * The FissLock decider (spec §4.4, §6): 18 bits per lock (free 1, r/w 1, mid 8, inca 8) in
 * register arrays spread over the pipeline — stage 0 per-server sequence numbers, 1 MAU selection
 * (no state), then `inca` split over b MAUs, `free`, `r/w` (+ the optional policy bit), `mid`
 * split over b MAUs, and control stages. FREE and GRANT follow that order (Check first, §6.4).
 * Two declared orders depart from it: ACQUIRE visits Free and R/W before Check (spec §12.3), and
 * RELEASE visits Check and MID before Free (the §5.2 timeout-free rule needs `mid` and `inca`
 * before it may write `free`; hardware would recirculate).
 */
export function fissLockDecider(options: FissLockDeciderOptions = {}): FissLockDecider {
  checkDeciderOptions(options);
  const policy = options.policy ?? 'read-preferring';
  let state: Arrays | undefined;
  const built = (): Arrays => {
    if (!state) throw new SwitchControlError('the fisslock program has not been built into a switch');
    return state;
  };

  return {
    name: 'fisslock',
    policy,
    lockCount: () => built().lockCount,
    capacity: () => built().capacity,
    build(pipeline: Pipeline): void {
      const stages = pipeline.stageCount;
      const bits = Math.min(...pipeline.maus.map((m) => m.capacityBits));
      const capacity = lockCapacity(stages, bits);
      const lockCount = Math.min(options.lockCount ?? capacity, capacity);
      let b = Math.min(byteArrayParts(stages, bits), lockCount);
      // small lock counts: fewer parts, so that none of them is left empty (e.g. 4 locks in 3 parts of 2)
      while (b > 1 && Math.ceil(lockCount / b) * (b - 1) >= lockCount) b--;
      const incaStages = range(2, b);
      const freeStage = 2 + b;
      const rwStage = freeStage + 1;
      const midStages = range(rwStage + 1, b);
      const seq = pipeline.addArray({ name: FISSLOCK_ARRAYS.seq, width: 32, length: SEQ_SOURCES, stage: 0 });
      const inca = pipeline.addSplitArray({ name: FISSLOCK_ARRAYS.inca, width: 8, length: lockCount, stages: incaStages });
      const free = pipeline.addArray({ name: FISSLOCK_ARRAYS.free, width: 1, length: lockCount, stage: freeStage, initial: 1 });
      const rw = pipeline.addArray({ name: FISSLOCK_ARRAYS.rw, width: 1, length: lockCount, stage: rwStage });
      const pref = policy === 'read-preferring' ? undefined : pipeline.addArray({ name: FISSLOCK_ARRAYS.pref, width: 1, length: lockCount, stage: rwStage });
      const mid = pipeline.addSplitArray({ name: FISSLOCK_ARRAYS.mid, width: 8, length: lockCount, stages: midStages });
      const fallback = pipeline.addTable(FISSLOCK_FALLBACK_TABLE);
      (options.fallbackNodes ?? []).forEach((node, k) => fallback.setEntry(k, node));
      const all = range(0, stages);
      const rest = all.filter((s) => s > midStages[midStages.length - 1]!);
      pipeline.declareStageOrder(
        'acquire',
        [0, 1, freeStage, rwStage, ...incaStages, ...midStages, ...rest],
        'FissLock spec §12.3: an ACQUIRE must know whether it is granted immediately as shared (②) before it increments inca',
      );
      pipeline.declareStageOrder(
        'release',
        [0, 1, ...incaStages, ...midStages, freeStage, rwStage, ...rest],
        'FissLock spec §5.2: the timeout-free of a RELEASE from the agent machine needs inca and mid before writing free (recirculation on hardware)',
      );
      state = { seq, free, rw, pref, mid, inca, fallback, lockCount, capacity };
    },
    process(packet: LockPacket, _ingress: Ingress, ctx: PacketContext): EgressAction[] {
      const s = built();
      if (packet.type === 'ack') return route(ctx, 'ack-routed', packet.dst, packet);
      const lid = packet.lock;
      // §6.3/§6.6: an index at or above lockCount is out of range whatever its flags — the client
      // decides by index alone and its fallback packets carry no FLAG_FALLBACK — so it is forwarded
      // to its owner and never reaches a register (which has no cell for it anyway)
      const fallback = (packet.flags & FLAG_FALLBACK) !== 0 || lid >= s.lockCount;
      if (packet.type === 'acquire') ctx.useStageOrder(fallback || (packet.flags & FLAG_GRANTED) !== 0 ? 'default' : 'acquire');
      else if (packet.type === 'release' && !fallback) ctx.useStageOrder('release');
      // out-of-range locks belong to the fallback lock managers, whose packets carry their own
      // request ids in `seq`: they are routed before the per-server sequence stage, never counted
      if (fallback) return routeFallback(ctx, s, packet);
      const src = srcOf(packet);
      const seqStatus = ctx.update<SeqStatus>(s.seq, src % SEQ_SOURCES, (old) => {
        if (packet.seq === ((old + 1) >>> 0)) return { next: packet.seq, out: 'new' };
        if (((old - packet.seq) >>> 0) < 0x8000_0000) return { next: old, out: 'dup' };
        return { next: old, out: 'gap' };
      });
      // go-back-N: a packet after a gap is dropped and comes again with the retransmission
      if (seqStatus === 'gap') return drop(ctx, 'seq-gap');
      const dup = seqStatus === 'dup';
      if (packet.machine > MAX_MACHINE_ID) return drop(ctx, 'bad-mid');
      switch (packet.type) {
        case 'acquire':
          return acquire(ctx, s, packet, src, dup, policy, options);
        case 'release':
          return release(ctx, s, packet, src, dup);
        case 'free':
          return freePacket(ctx, s, packet, src, dup, options.mutantNoIncarnationCheck === true);
        case 'grant':
          return grant(ctx, s, packet, src, dup, policy, options.mutantNoIncarnationCheck === true);
        case 'transfer':
          return route(ctx, 'transfer-entry', packet.dst, packet);
        case 'notify':
          if (!dup && s.pref) ctx.set(s.pref, lid);
          return [ack(ctx, packet, src, dup ? 'duplicate' : 'accepted', 'starve')];
        default:
          return drop(ctx, 'unknown-type');
      }
    },
    meta(lid: number): LockMeta {
      const s = built();
      const mid = located(s.mid, lid);
      const pref = s.pref;
      return {
        free: s.free.get(lid) === 1,
        mode: s.rw.get(lid) === 1 ? 'shared' : 'exclusive',
        mid: mid === 0 ? undefined : mid - 1,
        inca: located(s.inca, lid),
        pref: pref ? pref.get(lid) === 1 : false,
      };
    },
  };
}

export const FISSLOCK_POLICIES: readonly FissLockPolicy[] = ['read-preferring', 'starvation-prevention', 'write-preferring'];

/** Options from outside (a service's config, a harness's protocol options) are checked before any register is allocated. */
function checkDeciderOptions(options: FissLockDeciderOptions): void {
  const issues: string[] = [];
  const { lockCount, policy, fallbackNodes } = options;
  if (lockCount !== undefined && (!Number.isSafeInteger(lockCount) || lockCount < 1)) issues.push(`fisslock: lockCount must be a positive integer, got ${String(lockCount)}`);
  if (policy !== undefined && !FISSLOCK_POLICIES.includes(policy)) issues.push(`fisslock: policy must be one of ${FISSLOCK_POLICIES.join(', ')}, got ${String(policy)}`);
  (fallbackNodes ?? []).forEach((node, k) => {
    if (!Number.isSafeInteger(node) || node < 0 || node > MAX_MACHINE_ID) issues.push(`fisslock: fallbackNodes[${k}] must be a machine id in [0, ${MAX_MACHINE_ID}], got ${String(node)}`);
  });
  if (issues.length > 0) throw new ConfigError(issues);
}

function acquire(ctx: PacketContext, s: Arrays, p: LockPacket, src: NodeId, dup: boolean, policy: FissLockPolicy, options: FissLockDeciderOptions): EgressAction[] {
  const lid = p.lock;
  const noIncaBound = options.mutantNoIncaBound === true;
  if ((p.flags & FLAG_GRANTED) !== 0) {
    // a bounced ② copy: routed to the agent, never granted again, never counted again
    const mid = readMid(ctx, s, lid);
    if (mid !== 0) return route(ctx, 'granted-copy-routed', mid - 1, p);
    // Free: the shared lifetime it was granted in has ended, which needs its agent to have counted
    // the copy or written it off, so it is stale. It is ACKed as a duplicate, as a DUP ACQUIRE of a
    // free lock is; dropped silently, its bouncer resent it every RTO for ever (swarm seed 510).
    return options.mutantSilentStaleCopy === true ? drop(ctx, 'granted-copy-no-agent') : [ack(ctx, p, src, 'duplicate', 'granted-copy-no-agent')];
  }
  if (dup || (p.flags & FLAG_DUP) !== 0) {
    // §5.1 rule 3: a duplicate is only routed, never decided again
    const free = ctx.read(s.free, lid);
    if (free === 1) return [ack(ctx, p, src, 'duplicate', 'dup-on-free')];
    // FissLock §4.2 processes a duplicate without touching lock metadata: the decision is read
    // again, not made. Whether it would be ② now travels with the copy (FLAG_GRANTABLE); the agent
    // uses it only when it knows the first copy was decided in its own lifetime.
    const grantable = p.mode === 'shared' && ctx.read(s.rw, lid) === 1 && !(s.pref && ctx.read(s.pref, lid) === 1) && (noIncaBound || readInca(ctx, s, lid) < INCA_BOUND);
    const mid = readMid(ctx, s, lid);
    return route(ctx, 'dup-routed', mid - 1, { ...p, flags: (p.flags & ~FLAG_GRANTABLE) | FLAG_DUP | (grantable ? FLAG_GRANTABLE : 0) });
  }
  const wasFree = ctx.clear(s.free, lid) === 1;
  const wantShared = p.mode === 'shared';
  let sharedGrant = false;
  if (wasFree) {
    if (wantShared) ctx.set(s.rw, lid);
    else ctx.clear(s.rw, lid);
  } else {
    const held = ctx.read(s.rw, lid);
    let blocked = false;
    if (s.pref) {
      if (policy === 'write-preferring' && !wantShared) ctx.set(s.pref, lid);
      else blocked = ctx.read(s.pref, lid) === 1;
    }
    sharedGrant = wantShared && held === 1 && !blocked;
  }
  const inca = s.inca.locate(lid);
  let bounded = false;
  if (wasFree) ctx.write(inca.array, inca.offset, 0);
  else if (sharedGrant) {
    // Check stage, one read-modify-write: count the ② grant, or at the bound forward it (INCA_BOUND)
    sharedGrant = ctx.update(inca.array, inca.offset, (old) => (noIncaBound || old < INCA_BOUND ? { next: (old + 1) & 0xff, out: true } : { next: old, out: false }));
    bounded = !sharedGrant;
  }
  const midAt = s.mid.locate(lid);
  if (wasFree) {
    ctx.write(midAt.array, midAt.offset, p.machine + 1);
    ctx.decide('grant-free');
    const grantPacket: LockPacket = { type: 'grant', lock: lid, machine: p.machine, task: p.task, mode: p.mode, incarnation: 0, seq: 0, flags: FLAG_HAS_AGENT, ...traceOf(p) };
    return withAck([{ kind: 'unicast', machine: p.machine, packet: grantPacket }], ctx, p, src);
  }
  const mid = ctx.read(midAt.array, midAt.offset);
  if (sharedGrant) {
    ctx.decide('grant-shared');
    // the GRANT and its GRANTED copy name the machine the copy goes to (the raw mid register): the
    // holder's RELEASE echoes it, so an agent elsewhere knows the grant was recorded by an agent
    // that has since ended and never takes the RELEASE for one whose copy was lost; a copy that
    // bounces on to another machine is stale there and is not counted (wire.ts, `incarnation`)
    const grantPacket: LockPacket = { type: 'grant', lock: lid, machine: p.machine, task: p.task, mode: 'shared', incarnation: mid, seq: 0, flags: 0, ...traceOf(p) };
    const copy: LockPacket = { ...p, incarnation: mid, flags: p.flags | FLAG_GRANTED };
    return withAck(
      [
        { kind: 'unicast', machine: mid - 1, packet: copy },
        { kind: 'unicast', machine: p.machine, packet: grantPacket },
      ],
      ctx,
      p,
      src,
    );
  }
  ctx.decide(bounded ? 'inca-bound-queued' : 'queued-at-agent');
  return [{ kind: 'unicast', machine: mid - 1, packet: p }];
}

function release(ctx: PacketContext, s: Arrays, p: LockPacket, src: NodeId, dup: boolean): EgressAction[] {
  const lid = p.lock;
  const dupLike = dup || (p.flags & FLAG_DUP) !== 0;
  const abortFree = !dupLike && (p.flags & (FLAG_ABORT | FLAG_REACHED | FLAG_BOUNCED)) === FLAG_ABORT;
  const incaAt = s.inca.locate(lid);
  const inca = abortFree ? ctx.read(incaAt.array, incaAt.offset) : 0;
  const midAt = s.mid.locate(lid);
  // mid is 0 exactly when the lock is free, so a match also proves the lock is held
  const { mid, freed } = abortFree
    ? ctx.update(midAt.array, midAt.offset, (old) =>
        old === p.machine + 1 && inca === 0 ? { next: 0, out: { mid: old, freed: true } } : { next: old, out: { mid: old, freed: false } },
      )
    : { mid: ctx.read(midAt.array, midAt.offset), freed: false };
  if (freed) {
    ctx.set(s.free, lid);
    if (s.pref) ctx.clear(s.pref, lid);
    return [ack(ctx, p, src, 'freed', 'timeout-free')];
  }
  if (mid === 0) return [ack(ctx, p, src, 'accepted', 'stale-release')];
  if (abortFree && mid === p.machine + 1) {
    // ② grants followed the lost ① grant: the agent's machine must build an empty agent (§5.2)
    const shared = ctx.read(s.rw, lid) === 1;
    ctx.decide('timeout-free-refused');
    const refusal: LockPacket = { ...p, type: 'free', mode: shared ? 'shared' : 'exclusive', incarnation: 0, flags: p.flags | FLAG_INVALID };
    return [{ kind: 'unicast', machine: mid - 1, packet: refusal }];
  }
  return route(ctx, dupLike ? 'dup-routed' : 'release-routed', mid - 1, dupLike ? { ...p, flags: p.flags | FLAG_DUP } : p);
}

function freePacket(ctx: PacketContext, s: Arrays, p: LockPacket, src: NodeId, dup: boolean, noCheck: boolean): EgressAction[] {
  const lid = p.lock;
  if (dup) {
    // §13.1: the refusal of the first copy may have been lost; refuse again while it still stands
    const standing = refusalStanding(ctx, s, p, src, p.mode === 'shared');
    if (standing === 'refused') return [refuseAgain(ctx, p, src)];
    return [ack(ctx, p, src, 'freed', standing === 'past-window' ? 'dup-free-past-window' : 'dup-free')];
  }
  const valid = checkIncarnation(ctx, s, p, p.mode === 'exclusive', noCheck);
  if (valid) {
    ctx.set(s.free, lid);
    if (s.pref) ctx.clear(s.pref, lid);
    const midAt = s.mid.locate(lid);
    ctx.write(midAt.array, midAt.offset, 0);
    return [ack(ctx, p, src, 'freed', 'free-accepted')];
  }
  const mid = readMid(ctx, s, lid);
  ctx.decide('free-refused');
  if (mid === 0) return drop(ctx, 'refused-no-agent');
  return [{ kind: 'unicast', machine: mid - 1, packet: { ...p, flags: p.flags | FLAG_INVALID } }];
}

function grant(ctx: PacketContext, s: Arrays, p: LockPacket, src: NodeId, dup: boolean, policy: FissLockPolicy, noCheck: boolean): EgressAction[] {
  const lid = p.lock;
  if ((p.flags & FLAG_HAS_AGENT) === 0) return route(ctx, 'follower-grant', p.machine, p);
  if (dup) {
    // §13.1 as for FREE: while the first copy's refusal stands — held shared, the agent still at the
    // sender, and the incarnation still differs — refuse again. The incarnation is checked for
    // every transfer, not only a shared one to the sender's own machine: if the grantee's ACK was
    // lost, the lock may have been accepted, used and come back to the sender shared before this
    // resend, and mid alone would then refuse an accepted transfer; the sender would restore its
    // old agent next to the new one (found by fisslock's wide sweep; see decider.test.ts). While a
    // refusal stands the decider's inca cannot catch up: only accepted FREEs/transfers reset it
    // and ② only adds. The agent pool also stops resending once it installs the lock's next agent.
    const standing = (p.flags & FLAG_CUR_SHARED) !== 0 ? refusalStanding(ctx, s, p, src, true) : 'settled';
    if (standing === 'refused') return [refuseAgain(ctx, p, src)];
    return route(ctx, standing === 'past-window' ? 'dup-transfer-past-window' : 'dup-transfer', p.machine, { ...p, flags: p.flags | FLAG_DUP });
  }
  const valid = checkIncarnation(ctx, s, p, (p.flags & FLAG_CUR_SHARED) === 0, noCheck);
  const midAt = s.mid.locate(lid);
  if (valid) {
    if (p.mode === 'shared') ctx.set(s.rw, lid);
    else ctx.clear(s.rw, lid);
    if (s.pref) {
      if (policy === 'write-preferring' && (p.flags & FLAG_WW_NEXT) !== 0) ctx.set(s.pref, lid);
      else ctx.clear(s.pref, lid);
    }
    ctx.write(midAt.array, midAt.offset, p.machine + 1);
    return route(ctx, 'transfer-accepted', p.machine, p);
  }
  const mid = ctx.read(midAt.array, midAt.offset);
  ctx.decide('transfer-refused');
  if (mid === 0) return drop(ctx, 'refused-no-agent');
  return [{ kind: 'unicast', machine: mid - 1, packet: { ...p, flags: p.flags | FLAG_INVALID } }];
}

/**
 * A duplicate FREE / agent GRANT whose first copy was refused: the lock is still held shared by
 * the sender's machine and the decider's inca is still *ahead* of the packet's. A refusal leaves
 * the decider ahead (it counted ② grants whose copies the agent had not seen, and ② only adds);
 * merely "differs" is not enough: a self-transfer (agent and grantee on one machine) that was
 * accepted leaves mid and r/w as they were and inca reset to 0, so a resend of it — its GRANT lost
 * on the way back — would be refused and the sender would rebuild its agent with an inca above
 * the decider's, letting a later stale transfer match once enough ② grants catch up (fisslock
 * sweep, both links at 10 %, seed 31). Reads only (one access per array).
 */
function refusalStanding(ctx: PacketContext, s: Arrays, p: LockPacket, src: NodeId, curShared: boolean): 'refused' | 'past-window' | 'settled' {
  const incaAt = s.inca.locate(p.lock);
  const inca = ctx.read(incaAt.array, incaAt.offset);
  const free = ctx.read(s.free, p.lock);
  const shared = ctx.read(s.rw, p.lock);
  const mid = readMid(ctx, s, p.lock);
  if (!(curShared && free === 0 && shared === 1 && mid === src + 1)) return 'settled';
  if (incaAhead(inca, p.incarnation)) return 'refused';
  // 128 or more steps apart: the 8-bit counter cannot tell ahead from behind (INCA_BOUND keeps the
  // decider out of this window; counted so that tests can see the mutant reach it)
  return ((inca - p.incarnation) & 0xff) >= 0x80 ? 'past-window' : 'settled';
}

/** The decider's 8-bit inca is 1–127 steps past the agent's (the counter wraps). */
function incaAhead(decider: number, agent: number): boolean {
  const steps = (decider - agent) & 0xff;
  return steps > 0 && steps < 0x80;
}

function refuseAgain(ctx: PacketContext, p: LockPacket, src: NodeId): EgressAction {
  ctx.decide('dup-refused-again');
  return { kind: 'unicast', machine: src, packet: { ...p, flags: p.flags | FLAG_INVALID } };
}

/** Check stage: exclusive before the change, or the agent counted every ② grant → inca resets to 0. */
function checkIncarnation(ctx: PacketContext, s: Arrays, p: LockPacket, exclusive: boolean, noCheck: boolean): boolean {
  const at = s.inca.locate(p.lock);
  return ctx.update(at.array, at.offset, (old) =>
    noCheck || exclusive || (p.incarnation & 0xff) === old ? { next: 0, out: true } : { next: old, out: false },
  );
}

function routeFallback(ctx: PacketContext, s: Arrays, p: LockPacket): EgressAction[] {
  if (p.dst !== undefined) return route(ctx, 'fallback-routed', p.dst, p);
  const n = s.fallback.size;
  if (n === 0) return drop(ctx, 'no-fallback-node');
  const owner = s.fallback.lookup(fallbackSlot(p.lock, n));
  return typeof owner === 'number' ? route(ctx, 'fallback-routed', owner, { ...p, flags: p.flags | FLAG_FALLBACK }) : drop(ctx, 'no-fallback-node');
}

/** Owner slot of an out-of-range lock: a multiplicative hash, mod the number of fallback nodes (spec §12.20). */
export function fallbackSlot(lid: number, nodes: number): number {
  return (Math.imul(lid, 0x9e3779b1) >>> 0) % nodes;
}

function readInca(ctx: PacketContext, s: Arrays, lid: number): number {
  const at = s.inca.locate(lid);
  return ctx.read(at.array, at.offset);
}

function readMid(ctx: PacketContext, s: Arrays, lid: number): number {
  const at = s.mid.locate(lid);
  return ctx.read(at.array, at.offset);
}

function located(split: SplitRegisterArray, lid: number): number {
  const at = split.locate(lid);
  return at.array.get(at.offset);
}

function ack(ctx: PacketContext, p: LockPacket, src: NodeId, status: AckStatus, decision?: string): EgressAction {
  if (decision !== undefined) ctx.decide(decision);
  const packet: LockPacket = { type: 'ack', lock: p.lock, machine: p.machine, task: p.task, mode: p.mode, incarnation: 0, seq: p.seq, flags: ackFlags(status), dst: src };
  return { kind: 'unicast', machine: src, packet };
}

/** A switch GRANT is the requester's ACK; a packet bounced by another machine needs its own. */
function withAck(actions: EgressAction[], ctx: PacketContext, p: LockPacket, src: NodeId): EgressAction[] {
  return src === p.machine ? actions : [...actions, ack(ctx, p, src, 'accepted')];
}

function route(ctx: PacketContext, decision: string, machine: NodeId | undefined, packet: LockPacket): EgressAction[] {
  if (machine === undefined) return drop(ctx, 'no-dst');
  ctx.decide(decision);
  return [{ kind: 'unicast', machine, packet }];
}

function drop(ctx: PacketContext, reason: string): EgressAction[] {
  ctx.decide(reason);
  return [{ kind: 'drop', reason }];
}

function traceOf(p: LockPacket): { trace?: LockPacket['trace'] } {
  return p.trace ? { trace: p.trace } : {};
}

function range(start: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => start + k);
}
