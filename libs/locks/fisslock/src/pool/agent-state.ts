import type { LockMode, LockPacket, NodeId, SpanContextRef } from '@lockfabric/ports';
import { FLAG_ABORT, FLAG_BOUNCED, FLAG_CUR_SHARED, FLAG_DUP, FLAG_GRANTABLE, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_REACHED, FLAG_WW_NEXT, WAITER_COUNT_SHIFT, ackFlags, clientOfTask, grantHomeOf } from '../wire.js';
import type { AckStatus } from '../wire.js';
import { pendingOutlivesAbortRefusal } from './abort-refusal.js';
import { holderKey } from './agent.js';
import type { FissPolicy, Waiter } from './agent.js';
import type { Releaser } from './handover-span.js';
import { NO_ANCHORS, anchorsFrom, decidedWithin, withDecided } from './lifetime-anchors.js';
import type { Anchors } from './lifetime-anchors.js';

/**
 * One lock's agent on one machine as a plain value, and the pure transition function `step`
 * (FissLock §4: local grant ④, local queue ⑤, release ⑥, FREE ⑦, transfer ⑧; §4.2 ②/③ copies).
 * `step` does no I/O: what the machine must do — send a packet, deliver a GRANT, arm a watchdog
 * check, count — comes back as data (`AgentAction`) that the AgentPool carries out in order.
 */

/** The agent's contents (spec §2.2). `id` names one agent across its states: kept while it is
 * handed on and restored after a refusal, new for every agent built (timers and loops compare it). */
export interface AgentValue {
  readonly id: number;
  readonly mode: LockMode;
  readonly inca: number;
  /** Holders keyed `mid:task` (holderKey), in grant order. */
  readonly holders: ReadonlySet<string>;
  /** FIFO wait queue. */
  readonly wqueue: readonly Waiter[];
  /** Per sender, a seq the decider is known to have decided within this lifetime (pool/lifetime-anchors.ts). */
  readonly anchors: Anchors;
}

/**
 * none: no agent of the lock here. live: the agent is here (`parked`: FissLock-Local keeps it at
 * the lock's home with no holder, decision 0012). pending: handed on by a FREE or a transfer GRANT
 * that the decider has not answered yet; a refusal brings it back (§13.2).
 */
export type AgentState =
  | { readonly kind: 'none' }
  | { readonly kind: 'live'; readonly agent: AgentValue; readonly parked: boolean }
  | { readonly kind: 'pending'; readonly agent: AgentValue };

export const NO_AGENT: AgentState = { kind: 'none' };

/** Counters a transition may bump (the pool's counters of the same names). */
export type AgentCounter =
  | 'localGrants'
  | 'parkedGrants'
  | 'parks'
  | 'installs'
  | 'refusals'
  | 'queuedThenGranted'
  | 'grantedTwice'
  | 'orphanedCopies'
  | 'foreignCopies'
  | 'lateCopiesReleased'
  | 'writtenOff'
  | 'swallowedReleased'
  | 'dupGrantsCounted';

/** What the answer to a sent packet means to the agent that sent it. */
export type AckHook = { readonly kind: 'free-answered'; readonly id: number } | { readonly kind: 'grant-answered'; readonly id: number };

/** A packet the agent sends on the machine's reliable link (seq and agent are the link's). */
export type OutPacket = Omit<LockPacket, 'seq' | 'agent'>;

export type AgentAction =
  /** Send on the sequenced link. `ender`: it may end a lifetime held here (LifetimeMarks). `handover`: start a ⑧ span first and carry it. */
  | { readonly kind: 'send'; readonly packet: OutPacket; readonly ender?: true; readonly onAck?: AckHook; readonly handover?: { readonly next: Waiter; readonly releaser?: Releaser | undefined } }
  /** An unsequenced ACK with REACHED to the requester's machine (best effort, seq 0). */
  | { readonly kind: 'send-reached'; readonly packet: LockPacket }
  /** A local task's request was recorded by an agent (its abort must go to the agent). */
  | { readonly kind: 'note-recorded'; readonly task: number }
  /** Hand a GRANT to its local task (or release it at once if nobody waits for it). */
  | { readonly kind: 'deliver'; readonly grant: LockPacket }
  | { readonly kind: 'count'; readonly counter: AgentCounter }
  /** Void this machine's unanswered FREE / transfer GRANTs of the lock (an agent was installed). */
  | { readonly kind: 'void-old-handoffs' }
  | { readonly kind: 'watch-waiter'; readonly agent: AgentValue }
  | { readonly kind: 'watch-local-holder'; readonly holder: string }
  | { readonly kind: 'watch-refused' }
  | { readonly kind: 'watch-clear' }
  | { readonly kind: 'starve-check'; readonly agent: AgentValue }
  | { readonly kind: 'starve-writer-queued'; readonly agent: AgentValue }
  | { readonly kind: 'starve-stop' }
  | { readonly kind: 'backoff-forget' }
  /** The ② copy of this request, should it come after all, counts nothing (StuckReleases' written-off record). */
  | { readonly kind: 'stuck-write-off'; readonly packet: LockPacket }
  /** The agent counted the ② grant of `task` of machine `mid` toward its inca (pool/counted-grants.ts). */
  | { readonly kind: 'grant-counted'; readonly mid: NodeId; readonly task: number }
  | { readonly kind: 'stuck-restart' };

export type AgentEvent =
  /** A client of this machine asks (④⑤). */
  | { readonly type: 'local-acquire'; readonly task: number; readonly mode: LockMode }
  /** A locally queued waiter gives up. */
  | { readonly type: 'local-abort'; readonly task: number }
  /** A client of this machine releases (⑥⑦⑧); `switchShared`: the hold is a ② grant. */
  | { readonly type: 'local-release'; readonly task: number; readonly switchShared: boolean; readonly acquireSpan?: SpanContextRef | undefined }
  /**
   * A sequenced ACQUIRE reached the agent (③ forwarded, or ② GRANTED copy). `givenUp`: its abort
   * was answered here first (pool/given-up.ts). `requesterSeq`: for a duplicate, the seq its
   * requester gave it, when known (see grantedDuplicate).
   */
  | { readonly type: 'acquire'; readonly packet: LockPacket; readonly givenUp: boolean; readonly requesterSeq?: number | undefined }
  /** A sequenced RELEASE (⑨ or an abort) reached this machine. */
  | { readonly type: 'release'; readonly packet: LockPacket }
  /** §13.4: the ② copy this RELEASE waits for is taken as lost; count both. */
  | { readonly type: 'write-off'; readonly packet: LockPacket }
  /**
   * A GRANT carrying an agent (① empty, ⑧ with its queue) arrived complete. `anchorSeq`: this
   * machine's packets after it are of the new lifetime (its ① ACQUIRE or self-transfer GRANT, else
   * its link's last seq).
   */
  | { readonly type: 'install'; readonly grant: LockPacket; readonly queue: readonly Waiter[]; readonly newId: number; readonly anchorSeq: number }
  /**
   * The decider refused this machine's FREE / transfer GRANT / timeout-free (INVALID). `resent`:
   * the packet went out more than once; `movedOn`: a lifetime may have begun here since its first
   * copy (AgentPool.mayHaveMovedOn).
   */
  | { readonly type: 'refused'; readonly packet: LockPacket; readonly newId: number; readonly resent: boolean; readonly movedOn: boolean }
  /** The answer (ACK) of a FREE or transfer GRANT this machine sent for the agent `id`. */
  | { readonly type: 'free-answered'; readonly id: number; readonly freed: boolean }
  | { readonly type: 'grant-answered'; readonly id: number }
  /**
   * This machine's abort of `task` came back freed (the switch's timeout-free, §5.2): a GRANT the
   * task took silently while the abort was out is released now, for the abort released nothing.
   */
  | { readonly type: 'abort-freed'; readonly task: number }
  /** Recovery S2 (whole machine or one lock) ordered this agent here. */
  | { readonly type: 'restored'; readonly agent: AgentValue };

/** What a transition reports back to its caller, besides state and actions. */
export type AgentOutcome =
  | 'granted'
  | 'queued'
  | 'no-agent'
  | 'done'
  | 'not-found'
  | 'removed'
  | 'bounce'
  | 'unmatched'
  | 'ignored'
  | AckStatus;

export interface Step {
  readonly state: AgentState;
  readonly actions: readonly AgentAction[];
  readonly outcome: AgentOutcome;
}

/** What a machine's agents all share: fixed for the pool's life. */
export interface AgentRules {
  readonly machine: NodeId;
  readonly policy: FissPolicy;
  /** FissLock-Local: whether an idle agent of this lock parks here (its home); always false with placement migrate. */
  readonly parksHere: (lid: number) => boolean;
  /** Test-only mutant of FissLock-Local: a parked agent grants a local request of the other mode and takes that mode (breaks Lemma 1). */
  readonly mutantParkedModeChange?: boolean;
  /** Test-only mutant: a duplicate ACQUIRE is always queued, even when its first copy was certainly granted ② in this lifetime. */
  readonly mutantDupNeverGranted?: boolean;
  /** Test-only mutant: a ② copy is counted by whatever shared agent it reaches, not only at the home it names (the old rule). */
  readonly mutantCountForeignCopy?: boolean;
}

/** A mutable copy of an agent, private to one transition. */
interface Draft {
  readonly id: number;
  mode: LockMode;
  inca: number;
  readonly holders: Set<string>;
  wqueue: Waiter[];
  anchors: Anchors;
}

const draftOf = (a: AgentValue): Draft => ({ id: a.id, mode: a.mode, inca: a.inca, holders: new Set(a.holders), wqueue: [...a.wqueue], anchors: a.anchors });

/** One transition of one lock's agent on `rules.machine`. Pure: `state` is not changed. */
export function step(rules: AgentRules, lid: number, state: AgentState, event: AgentEvent): Step {
  return new Transition(rules, lid, state).run(event);
}

class Transition {
  private readonly actions: AgentAction[] = [];
  /** The state after the transition, built as it goes. */
  private kind: AgentState['kind'];
  private draft: Draft | undefined;
  private parked: boolean;

  constructor(
    private readonly rules: AgentRules,
    private readonly lid: number,
    state: AgentState,
  ) {
    this.kind = state.kind;
    this.draft = state.kind === 'none' ? undefined : draftOf(state.agent);
    this.parked = state.kind === 'live' && state.parked;
  }

  run(event: AgentEvent): Step {
    const outcome = this.apply(event);
    return { state: this.state(), actions: this.actions, outcome };
  }

  private state(): AgentState {
    const d = this.draft;
    if (this.kind === 'none' || !d) return NO_AGENT;
    const agent: AgentValue = { id: d.id, mode: d.mode, inca: d.inca, holders: d.holders, wqueue: d.wqueue, anchors: d.anchors };
    return this.kind === 'live' ? { kind: 'live', agent, parked: this.parked } : { kind: 'pending', agent };
  }

  private live(): Draft | undefined {
    return this.kind === 'live' ? this.draft : undefined;
  }

  private apply(e: AgentEvent): AgentOutcome {
    switch (e.type) {
      case 'local-acquire':
        return this.localAcquire(e.task, e.mode);
      case 'local-abort': {
        const a = this.live();
        const at = a ? a.wqueue.findIndex((w) => w.mid === this.rules.machine && w.task === e.task) : -1;
        if (!a || at < 0) return 'not-found';
        a.wqueue.splice(at, 1);
        return 'removed';
      }
      case 'local-release': {
        const a = this.live();
        if (!a) return 'no-agent';
        const releaser = { from: `${this.rules.machine}/${clientOfTask(e.task)}`, acquire: e.acquireSpan };
        return this.releaseCore(a, this.rules.machine, e.task, releaser, e.switchShared) ? 'done' : 'not-found';
      }
      case 'acquire':
        return this.acquire(e.packet, e.givenUp, e.requesterSeq);
      case 'release': {
        const a = this.live();
        const p = e.packet;
        const releaser = { from: `${p.machine}/${clientOfTask(p.task)}`, acquire: p.trace };
        return a && this.releaseCore(a, p.machine, p.task, releaser, (p.flags & FLAG_GRANTED) !== 0) ? 'accepted' : 'unmatched';
      }
      case 'write-off':
        return this.writeOff(e.packet);
      case 'install':
        return this.install(e.grant, e.queue, e.newId, e.anchorSeq);
      case 'refused':
        return this.refused(e.packet, e.newId, e.resent, e.movedOn);
      case 'free-answered':
        if (!e.freed || this.kind !== 'pending' || this.draft?.id !== e.id) return 'ignored';
        this.kind = 'none';
        this.draft = undefined;
        this.actions.push({ kind: 'watch-clear' });
        return 'done';
      case 'grant-answered':
        if (this.kind !== 'pending' || this.draft?.id !== e.id) return 'ignored';
        this.kind = 'none';
        this.draft = undefined;
        return 'done';
      case 'abort-freed': {
        // swarm lossy seed 242: a DUP copy queued at the next local agent was handed the lock by
        // self-transfer while the abort was out; nobody would ever release that holder
        const a = this.live();
        if (!a?.holders.has(holderKey(this.rules.machine, e.task))) return 'ignored';
        this.count('swallowedReleased');
        this.releaseCore(a, this.rules.machine, e.task, { from: `${this.rules.machine}/${clientOfTask(e.task)}`, acquire: undefined }, false);
        return 'done';
      }
      case 'restored':
        this.kind = 'live';
        this.draft = draftOf(e.agent);
        this.parked = false;
        this.actions.push({ kind: 'starve-check', agent: e.agent });
        return 'done';
    }
  }

  /** FissLock-Local: the agent is parked while it has neither holders nor waiters since it parked. */
  private isParked(a: Draft): boolean {
    if (!this.parked) return false;
    if (a.holders.size === 0 && a.wqueue.length === 0) return true;
    this.parked = false;
    return false;
  }

  /** ④ a shared request on a shared agent nobody blocks; ⑤ otherwise queued; parked agents grant their own mode. */
  private localAcquire(task: number, mode: LockMode): AgentOutcome {
    const a = this.live();
    if (!a) return 'no-agent';
    const k = holderKey(this.rules.machine, task);
    if (this.isParked(a)) {
      this.parked = false;
      if (mode !== a.mode) {
        if (this.rules.mutantParkedModeChange !== true) {
          // a mode change goes through the decider (Lemma 1): FREE the parked agent, then ACQUIRE
          // on the same FIFO link, so the decider frees the lock before it decides the request
          this.handOn(a, undefined, false);
          return 'no-agent';
        }
        a.mode = mode;
      }
      a.holders.add(k);
      this.count('localGrants');
      this.count('parkedGrants');
      return 'granted';
    }
    if (mode === 'shared' && a.mode === 'shared' && !this.blocksReaders(a)) {
      a.holders.add(k); // ④
      this.count('localGrants');
      return 'granted';
    }
    a.wqueue.push({ mid: this.rules.machine, task, mode }); // ⑤
    this.actions.push({ kind: 'watch-waiter', agent: this.snapshot(a) });
    this.actions.push(mode === 'exclusive' ? { kind: 'starve-writer-queued', agent: this.snapshot(a) } : { kind: 'starve-check', agent: this.snapshot(a) });
    return 'queued';
  }

  /** A sequenced ACQUIRE at this machine: ③ queued, ② counted as a holder, or bounced (no agent here). */
  private acquire(p: LockPacket, givenUp: boolean, requesterSeq: number | undefined): AgentOutcome {
    const granted = (p.flags & FLAG_GRANTED) !== 0;
    if (granted && this.foreignCopy(p)) {
      this.count('foreignCopies');
      return 'duplicate';
    }
    const a = this.live();
    // A ② copy reaching an exclusive agent (see AgentPool: orphaned by a write-off at its home)
    if (granted && a?.mode === 'exclusive') {
      this.count('orphanedCopies');
      return 'duplicate';
    }
    if (!a) return 'bounce';
    const k = holderKey(p.machine, p.task);
    const queuedAt = a.wqueue.findIndex((w) => holderKey(w.mid, w.task) === k);
    if (granted && queuedAt >= 0) {
      // a DUP copy of this ACQUIRE got here first and queued it: the decider granted it (②)
      a.wqueue.splice(queuedAt, 1);
      this.count('queuedThenGranted');
    } else if (granted && a.holders.has(k)) {
      // Granted twice: a bounced (non-DUP) copy was decided again (§12.4) while another copy was
      // queued and granted here as a shared follower. The decider counted this one, so the agent
      // counts it too, or its FREE / transfer is refused for ever.
      a.inca = (a.inca + 1) & 0xff;
      this.count('grantedTwice');
      return 'duplicate';
    } else if (a.holders.has(k) || queuedAt >= 0) return 'duplicate';
    const dupGranted = this.grantedDuplicate(p, a, requesterSeq);
    if (dupGranted) {
      // its ② copy, should it come after all, counts nothing (the pool's written-off record)
      this.actions.push({ kind: 'stuck-write-off', packet: p });
      this.count('dupGrantsCounted');
    }
    if (granted || dupGranted) {
      a.holders.add(k); // ② the decider already granted: count it
      a.inca = (a.inca + 1) & 0xff;
      this.actions.push({ kind: 'grant-counted', mid: p.machine, task: p.task });
      // the decider made this copy while naming this agent: the sender's later packets are of this lifetime too
      if ((p.flags & (FLAG_DUP | FLAG_BOUNCED)) === 0 && (p.agent ?? p.machine) === p.machine) a.anchors = withDecided(a.anchors, p.machine, p.seq);
      if (givenUp) {
        // its abort came first and was answered: count the grant, release the holder (pool/given-up.ts)
        this.count('lateCopiesReleased');
        this.releaseCore(a, p.machine, p.task, { from: `${p.machine}/${clientOfTask(p.task)}` }, true);
        return 'accepted';
      }
      if (p.machine === this.rules.machine) this.actions.push({ kind: 'watch-local-holder', holder: k });
    } else if (this.isParked(a)) {
      // ③ on a parked agent (FissLock-Local): no holder will ever hand it on, so hand it on now
      this.parked = false;
      a.wqueue.push({ mid: p.machine, task: p.task, mode: p.mode });
      this.handOn(a);
    } else {
      a.wqueue.push({ mid: p.machine, task: p.task, mode: p.mode }); // ③
      this.actions.push({ kind: 'watch-waiter', agent: this.snapshot(a) });
      this.actions.push({ kind: 'starve-check', agent: this.snapshot(a) });
    }
    // A DUP copy bounced by another machine: the requester's own ACK said "bounced, DUP" (not
    // REACHED) and this ACK goes to the bouncer, so tell the requester's machine that an agent
    // recorded it, or its unREACHED abort could take the switch's timeout-free while a transfer
    // GRANT to it is on its way (wide sweep, 2% faults, seed 55).
    const src = p.agent ?? p.machine;
    if ((p.flags & FLAG_DUP) === 0 || src === p.machine) return 'accepted';
    if (p.machine !== this.rules.machine) {
      this.actions.push({ kind: 'send-reached', packet: { type: 'ack', lock: p.lock, machine: this.rules.machine, task: p.task, mode: p.mode, incarnation: 0, seq: 0, flags: ackFlags('accepted') | FLAG_REACHED, dst: p.machine } });
    } else this.actions.push({ kind: 'note-recorded', task: p.task });
    return 'accepted';
  }

  /**
   * A ② copy that names another machine as its home (the decider's `mid` when it granted). The
   * decider counted the grant in that machine's lifetime of the lock, and that lifetime ends (an
   * accepted FREE / transfer) only once its agent counted the copy or wrote it off, so a copy
   * that bounced on to here is a stale duplicate. Counted here it made a holder nobody releases
   * and an inca ahead of the decider's (swarm seed 236: a bounced copy duplicated on the link,
   * counted at its home and again by the next shared agent elsewhere).
   */
  private foreignCopy(p: LockPacket): boolean {
    if (this.rules.mutantCountForeignCopy === true) return false;
    const home = grantHomeOf(p);
    return home !== undefined && home !== this.rules.machine;
  }

  /**
   * A duplicate ACQUIRE whose first copy the decider granted ② (FissLock §4.2: a duplicate is
   * processed without updating metadata, so the decision it reads again is the one made). The
   * decider only routes a DUP copy, but marks it GRANTABLE when held shared, no reader block and
   * under the incarnation bound; none of these turns from false to true within one lifetime. So
   * if the first copy was decided within this agent's lifetime (its anchors), it was a ② grant the
   * decider counted. When its GRANT and ② copy were both lost (swarm lossy seeds 24, 48), only this
   * copy tells the agent: queued as a waiter its count was missing for ever and every FREE /
   * transfer of the lock was refused. It is counted as the ② copy instead; the requester either
   * got the GRANT after all and releases it, or aborts, and its abort removes it from the holders.
   */
  private grantedDuplicate(p: LockPacket, a: Draft, requesterSeq: number | undefined): boolean {
    if (this.rules.mutantDupNeverGranted === true) return false;
    if ((p.flags & (FLAG_DUP | FLAG_GRANTABLE | FLAG_GRANTED)) !== (FLAG_DUP | FLAG_GRANTABLE)) return false;
    if (p.mode !== 'shared' || a.mode !== 'shared') return false;
    return requesterSeq !== undefined && decidedWithin(a.anchors, p.machine, requesterSeq);
  }

  /** §13.4, one lost ② copy: count the copy and its release together (see AgentPool.onRelease). */
  private writeOff(p: LockPacket): AgentOutcome {
    const a = this.live();
    if (!a) return 'unmatched';
    this.count('writtenOff');
    a.inca = (a.inca + 1) & 0xff;
    this.actions.push({ kind: 'grant-counted', mid: p.machine, task: p.task });
    // a DUP copy of the lost ② copy's ACQUIRE may have queued the holder as a waiter
    a.wqueue = a.wqueue.filter((w) => w.mid !== p.machine || w.task !== p.task);
    if (a.holders.size === 0) this.handOn(a);
    return 'accepted';
  }

  /**
   * Removes a holder (or an aborted waiter); hands the lock on when the last holder leaves. The
   * release of a ② grant (`switchShared`) never matches a waiter: the waiter is a DUP copy of the
   * same ACQUIRE that got here before the decider's ② copy; removing it would leave that copy to
   * add a holder nobody releases. It waits for the copy (bounce) like any ② RELEASE.
   */
  private releaseCore(a: Draft, mid: NodeId, task: number, releaser: Releaser | undefined, switchShared: boolean): boolean {
    const k = holderKey(mid, task);
    if (!a.holders.delete(k)) {
      if (switchShared) return false;
      const at = a.wqueue.findIndex((w) => holderKey(w.mid, w.task) === k);
      if (at < 0) return false; // the RELEASE overtook its ACQUIRE (§5.3): bounce
      a.wqueue.splice(at, 1);
      return true;
    }
    if (a.holders.size > 0) return true; // ⑥
    this.handOn(a, releaser);
    return true;
  }

  /** The last holder left: park (FissLock-Local), FREE ⑦, or transfer ⑧ to the queue's head. `mayPark`: false for a parked agent's mode change. */
  private handOn(a: Draft, releaser?: Releaser, mayPark = true): void {
    if (mayPark && a.holders.size === 0 && a.wqueue.length === 0 && this.rules.parksHere(this.lid)) {
      // FissLock-Local: the last holder at the lock's home left and nobody waits: park, no FREE
      this.parked = true;
      this.actions.push({ kind: 'starve-stop' }, { kind: 'watch-clear' });
      this.count('parks');
      return;
    }
    this.parked = false;
    this.kind = 'pending';
    this.actions.push({ kind: 'starve-stop' });
    const lid = this.lid;
    const machine = this.rules.machine;
    const next = a.wqueue[0];
    if (!next) {
      // ⑦
      this.actions.push({ kind: 'send', packet: { type: 'free', lock: lid, machine, task: 0, mode: a.mode, incarnation: a.inca, flags: 0 }, ender: true, onAck: { kind: 'free-answered', id: a.id } });
      return;
    }
    // ⑧: the rest of the queue travels as transfer entries sequenced just before the GRANT; the
    // grantee stays at the head of the pending agent's queue (a refusal restores it as it was)
    const rest = a.wqueue.slice(1);
    rest.forEach((w, i) => this.actions.push({ kind: 'send', packet: { type: 'transfer', lock: lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: i, flags: 0, dst: next.mid } }));
    const flags = FLAG_HAS_AGENT | (a.mode === 'shared' ? FLAG_CUR_SHARED : 0) | (rest.some((w) => w.mode === 'exclusive') ? FLAG_WW_NEXT : 0) | (rest.length << WAITER_COUNT_SHIFT);
    this.actions.push({
      kind: 'send',
      packet: { type: 'grant', lock: lid, machine: next.mid, task: next.task, mode: next.mode, incarnation: a.inca, flags },
      ender: true,
      onAck: { kind: 'grant-answered', id: a.id },
      handover: { next, releaser },
    });
  }

  /** Installs an agent carried by a GRANT (① or ⑧) and grants the leading run of shared waiters with it. */
  private install(g: LockPacket, queue: readonly Waiter[], id: number, anchorSeq: number): AgentOutcome {
    this.count('installs');
    // earlier FREEs / transfer GRANTs of the lock still on this machine's link are void now (AgentPool.install)
    this.actions.push({ kind: 'void-old-handoffs' }, { kind: 'backoff-forget' }, { kind: 'watch-clear' }, { kind: 'stuck-restart' });
    // the lifetime began at `anchorSeq` of this machine's link: what it sent after is of the new lifetime
    const a: Draft = { id, mode: g.mode, inca: 0, holders: new Set([holderKey(g.machine, g.task)]), wqueue: [...queue], anchors: anchorsFrom(this.rules.machine, anchorSeq) };
    this.kind = 'live';
    this.draft = a;
    if (a.mode === 'shared') {
      while (a.wqueue[0]?.mode === 'shared') {
        const w = a.wqueue.shift() as Waiter;
        a.holders.add(holderKey(w.mid, w.task));
        this.actions.push({ kind: 'send', packet: { type: 'grant', lock: g.lock, machine: w.mid, task: w.task, mode: 'shared', incarnation: 0, flags: 0, ...(g.trace ? { trace: g.trace } : {}) } });
      }
    }
    this.actions.push({ kind: 'starve-check', agent: this.snapshot(a) }, { kind: 'deliver', grant: g });
    return 'done';
  }

  /** FREE or transfer GRANT refused (or a timeout-free refused): restore the agent and wait for the delayed ② copies. */
  private refused(p: LockPacket, newId: number, resent: boolean, movedOn: boolean): AgentOutcome {
    this.count('refusals');
    if (this.kind === 'live') return 'ignored'; // never overwrite a live agent (§13.2)
    // A refused timeout-free (§5.2) asks for an empty agent here; a pending one is an agent already,
    // handed on by a FREE / transfer the decider has not answered yet: that packet's own answer
    // decides it (pool/abort-refusal.ts; both-links seeds 370, 378, 393, 500)
    if (pendingOutlivesAbortRefusal(p, this.kind === 'pending')) return 'ignored';
    const a: Draft = this.kind === 'pending' && this.draft ? this.draft : { id: newId, mode: p.mode, inca: 0, holders: new Set(), wqueue: [], anchors: NO_ANCHORS };
    if (p.type === 'grant') {
      // handOn leaves the grantee at the head of the pending agent's queue, so the refused grantee
      // goes back only into an agent rebuilt from the packet; a second copy of it would later be
      // granted twice (wide sweep, 10% faults, seed 89)
      const head = a.wqueue[0];
      if (head?.mid !== p.machine || head.task !== p.task) a.wqueue.unshift({ mid: p.machine, task: p.task, mode: p.mode });
      a.mode = (p.flags & FLAG_CUR_SHARED) !== 0 ? 'shared' : 'exclusive';
    } else if ((p.flags & FLAG_ABORT) !== 0 && p.type === 'free') {
      a.mode = p.mode; // built empty after a refused timeout-free
    }
    a.holders.clear();
    a.inca = p.type === 'free' && (p.flags & FLAG_ABORT) !== 0 ? 0 : p.incarnation & 0xff;
    // Refused when first sent: decided within the lifetime this agent carries on (or, after a
    // refused timeout-free, builds anew), so this machine's later packets are of it too. A resent
    // packet is refused again whenever the decider's inca is ahead of its own, which a later
    // lifetime here can also show if an earlier copy was accepted: then this agent may be stale
    // (wide seed 455), and its anchors go unless no lifetime can have begun here since.
    if (!resent) a.anchors = withDecided(a.anchors, this.rules.machine, p.seq);
    else if (movedOn) a.anchors = NO_ANCHORS;
    this.kind = 'live';
    this.draft = a;
    this.parked = false;
    this.actions.push({ kind: 'watch-refused' });
    return 'done';
  }

  private blocksReaders(a: Draft): boolean {
    if (this.rules.policy === 'read-preferring') return false;
    return a.wqueue.some((w) => w.mode === 'exclusive');
  }

  private count(counter: AgentCounter): void {
    this.actions.push({ kind: 'count', counter });
  }

  /** The agent as it stands at this point of the transition (for actions that look at it). */
  private snapshot(a: Draft): AgentValue {
    return { id: a.id, mode: a.mode, inca: a.inca, holders: new Set(a.holders), wqueue: [...a.wqueue], anchors: a.anchors };
  }
}
