import type { Clock, LockId, LockMode, LockPacket, NodeId, SpanContextRef, SwitchPort, Trace } from '@lockfabric/ports';
import { createSequencedLink, seqStreamOf } from './rack-links.js';
import type { SequencedLink } from './rack-links.js';
import { BounceBackoff, deferredBounceLink } from './pool/bounce-backoff.js';
import { holderKey } from './pool/agent.js';
import type { FissPolicy, Waiter } from './pool/agent.js';
import { NO_AGENT, step } from './pool/agent-state.js';
import type { AgentAction, AgentEvent, AgentOutcome, AgentRules, AgentState, AgentValue, AgentCounter } from './pool/agent-state.js';
import { startHandoverSpan } from './pool/handover-span.js';
import { ReceiveDedup, reAckDup } from './pool/receive-dedup.js';
import { answeredBySwitchGrant } from './pool/request-copies.js';
import { StarvationNotifier } from './pool/starvation.js';
import { StuckReleases } from './pool/stuck-releases.js';
import { StuckWatchdog } from './pool/stuck-watchdog.js';
import type { StuckReport } from './pool/stuck-watchdog.js';
import { TransferAssembly } from './pool/transfer-assembly.js';
import { LifetimeMarks } from './pool/lifetime-marks.js';
import { parksAtHome } from './pool/home-parking.js';
import type { AgentPlacement } from './pool/home-parking.js';
import { FLAG_ABORT, FLAG_BOUNCED, FLAG_DUP, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_INVALID, FLAG_REACHED, FLAG_VOID, ackFlags, ackStatusOf, grantHomeOf } from './wire.js';
import type { AckStatus } from './wire.js';
// recovery (S1/S2 hooks) types, used only by the section at the end of AgentPool
import type { RecoveryClientView } from './recovery/recovery-client.js';
import type { AgentRecord, MachineOrders, ServerReport } from './recovery/recovery-state.js';
import { requestKey } from './recovery/recovery-state.js';
import { GivenUpRequests } from './pool/given-up.js';
import { LockQuarantine } from './pool/quarantine.js';
import { BouncedOrigins, NO_ANCHORS } from './pool/lifetime-anchors.js';

export type { FissPolicy, Waiter } from './pool/agent.js';
export type { AgentState, AgentValue } from './pool/agent-state.js';
export type { AgentPlacement } from './pool/home-parking.js';

export interface AgentPoolOptions {
  readonly policy: FissPolicy;
  readonly rtoNs: number;
  readonly pacingNs: number;
  /** Largest multiple of `rtoNs` the retransmission timeout backs off to (1: fixed). */
  readonly rtoMaxBackoff?: number;
  readonly starvePeriodNs: number;
  /** First delay before re-sending a packet bounced again for the same lock; doubles per bounce up to `rtoNs` (0: bounce at once). */
  readonly bounceBackoffNs?: number;
  /** Where `lock.handover` spans of agent transfers (⑧) go. */
  readonly trace?: Trace;
  /** Lock ids at or above it belong to the fallback managers: the pool ignores their packets (default: all ids are the switch's). */
  readonly switchCapacity?: number;
  /** Switches the lock ids are partitioned over (§5.4): one sequence window per switch. Default 1. */
  readonly racks?: number;
  /** How long a RELEASE must keep coming back unprocessed before the pool takes what it waits for as lost (default 10 RTO). */
  readonly stuckAfterNs?: number;
  /** T_STUCK (spec §12.9): how long a lock may stay stuck before the watchdog reports it (0: watchdog off). */
  readonly tStuckNs?: number;
  /** Test-only mutant: process duplicated sequenced packets again instead of re-ACKing them. */
  readonly mutantNoDuplicateSuppression: boolean;
  /** Test-only mutant: agents never tell the switch that a writer waits (no STARVE / ww notice). */
  readonly mutantNoStarve?: boolean;
  /** `home`: FissLock-Local, agents park at their lock's home (pool/home-parking.ts); needs `placeAtHomes`. Default `migrate`. */
  readonly placement?: AgentPlacement;
  /** Test-only mutant of FissLock-Local: a parked agent grants a local request of the other mode without the decider. */
  readonly mutantParkedModeChange?: boolean;
  /** Test-only mutant: a duplicate ACQUIRE is always queued as a waiter, even when its first copy was certainly granted ② (pool/lifetime-anchors.ts). */
  readonly mutantDupNeverGranted?: boolean;
  /** Test-only mutant: an agent restored by a repeated refusal keeps its lifetime anchors even when the lock may have moved on (wide seed 455). */
  readonly mutantTrustReRefusal?: boolean;
}

/** What a client on this machine waits for: its GRANT (or the end of its abort). */
export interface TaskListener {
  /** The lock the task asked for (a GRANT for it may still be on its way to this machine). */
  readonly lock?: LockId;
  granted(packet: LockPacket): void;
}

const key = holderKey;

/** What the pool counts; read through `AgentPool.counters` (a copy). */
export interface PoolCounters {
  readonly bounced: number;
  readonly duplicates: number;
  readonly installs: number;
  readonly localGrants: number;
  readonly refusals: number;
  readonly reissuedAborts: number;
  readonly writtenOff: number;
  readonly staleReleases: number;
  readonly droppedAborts: number;
  readonly voidedOnInstall: number;
  readonly reissueDeferred: number;
  readonly abortsBehindAcquire: number;
  readonly queuedThenGranted: number;
  readonly grantedTwice: number;
  readonly orphanedCopies: number;
  readonly stuckLocks: number;
  readonly parks: number;
  readonly parkedGrants: number;
  readonly lateCopiesReleased: number;
  readonly swallowedReleased: number;
  readonly staleBounces: number;
  readonly dupGrantsCounted: number;
}

type Counts = { -readonly [K in keyof PoolCounters]: number };

const zeroCounts = (): Counts => ({ bounced: 0, duplicates: 0, installs: 0, localGrants: 0, refusals: 0, reissuedAborts: 0, writtenOff: 0, staleReleases: 0, droppedAborts: 0, voidedOnInstall: 0, reissueDeferred: 0, abortsBehindAcquire: 0, queuedThenGranted: 0, grantedTwice: 0, orphanedCopies: 0, stuckLocks: 0, parks: 0, parkedGrants: 0, lateCopiesReleased: 0, swallowedReleased: 0, staleBounces: 0, dupGrantsCounted: 0 });

/** An agent as recovery orders it (S2), or as a test or a harness plants it. */
export interface AgentOrder {
  readonly mode: LockMode;
  readonly inca?: number;
  readonly holders: readonly { readonly mid: NodeId; readonly task: number }[];
  readonly wqueue: readonly Waiter[];
}

/**
 * A machine's FissLock runtime: the agent pool (spec §4.3) plus the receive path every client of
 * the machine shares — ACKs to the reliable link, GRANTs to the waiting task, lock requests and
 * refusals to the agents. One instance per machine; clients call the `tryLocal*` methods directly
 * (workflows ④–⑦ without the network) and send the rest through `link`.
 *
 * Each lock's agent is a plain value (`AgentState`) changed only by the pure `step` of
 * pool/agent-state.ts; this class feeds it events and carries out the actions it returns. The
 * machine-wide bookkeeping lives in src/pool behind private state: receive dedup, transfer
 * assembly, bounce back-off, stuck releases, starvation notices, the T_STUCK watchdog.
 */
export class AgentPool {
  /** Every lock with an agent here, live or pending (a lock without one has no entry). */
  private readonly states = new Map<LockId, AgentState>();
  private nextAgentId = 1;
  private readonly rules: AgentRules;
  private currentLink: SequencedLink;
  private readonly listeners = new Map<number, TaskListener>();
  /**
   * Local tasks whose request an agent recorded (ACKed ACCEPTED), possibly only a copy bounced by
   * another machine: their abort must go to the agent (REACHED), never to the switch's
   * timeout-free, and they may have a transfer GRANT on its way (see mayReissueAbort).
   */
  private readonly recordedTasks = new Set<number>();
  private readonly dedup = new ReceiveDedup();
  private readonly transfers = new TransferAssembly((p) => this.streamOf(p));
  private readonly backoff: BounceBackoff;
  private readonly stuck: StuckReleases;
  private readonly starvation: StarvationNotifier;
  /** T_STUCK watchdog (spec §12.9): stuck locks go to `onStuckLock` (the per-lock repair). */
  private readonly watchdog: StuckWatchdog;
  /** Where the watchdog's reports go (the per-lock repair, or the compute node's reporter). */
  onStuckLock: ((report: StuckReport) => void) | undefined;
  private stopped = false;
  /** Enders and held marks of this machine's packets, per lock (see timeoutFreeUnsafe). */
  private readonly marks = new LifetimeMarks();
  /** Requests whose abort was answered here before their ② copy came: never held (pool/given-up.ts). */
  private readonly givenUp = new GivenUpRequests();
  /** Requesters' duplicate ACQUIREs this machine bounced: the seq of the copy the decider first saw. */
  private readonly bouncedOrigins = new BouncedOrigins();
  /** A stale ① GRANT for a request whose abort-release already freed the lock installs nothing. */
  private readonly discardedTasks = new Set<number>();
  private readonly unsubscribe: () => void;
  /** FissLock-Local only (placement home): the compute nodes whose ParLock homes agents park at. */
  private homes: readonly NodeId[] | undefined;
  private readonly count: Counts = zeroCounts();

  constructor(
    readonly machine: NodeId,
    private readonly port: SwitchPort,
    private readonly clock: Clock,
    readonly options: AgentPoolOptions,
  ) {
    this.currentLink = createSequencedLink(machine, port, clock, options);
    this.rules = {
      machine,
      policy: options.policy,
      parksHere: (lid) => this.homes !== undefined && parksAtHome(lid, machine, this.homes),
      ...(options.mutantParkedModeChange === true ? { mutantParkedModeChange: true } : {}),
      ...(options.mutantDupNeverGranted === true ? { mutantDupNeverGranted: true } : {}),
    };
    this.backoff = new BounceBackoff(options.bounceBackoffNs ?? 0, options.rtoNs);
    this.stuck = new StuckReleases(options.stuckAfterNs ?? 10 * options.rtoNs);
    this.starvation = new StarvationNotifier(options.policy, options.starvePeriodNs, clock, () => this.link, (lid) => this.agentOf(lid), machine, options.mutantNoStarve === true);
    // never shorter than the stuck-RELEASE wait (10 RTO): a slow link (live RTO 250 ms) is not a stuck lock
    const tStuckNs = options.tStuckNs ? Math.max(options.tStuckNs, options.stuckAfterNs ?? 10 * options.rtoNs) : 0;
    this.watchdog = new StuckWatchdog(tStuckNs, clock, this.watchdogView(), (r) => {
      this.count.stuckLocks++;
      this.onStuckLock?.(r);
    });
    this.currentLink.intercept = (p) => this.interceptQuarantined(p);
    this.unsubscribe = port.onPacket((packet) => this.receive(packet));
  }

  /** The machine's sequenced link to the switch(es); recovery replaces it (a new sequence space). */
  get link(): SequencedLink {
    return this.currentLink;
  }

  /** What the pool has counted so far (a copy). */
  get counters(): PoolCounters {
    return { ...this.count };
  }

  /** How many T_STUCK reports the watchdog made. */
  get stuckReports(): number {
    return this.watchdog.reports;
  }

  /** The repairer found the lock well after all (e.g. a long hold): the watchdog may report it again. */
  dismissStuck(lid: LockId): void {
    this.watchdog.dismiss(lid);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.link.stop();
    this.starvation.clear();
  }

  /** FissLock-Local: parks agents at their locks' ParLock homes over `computeNodes` (no-op unless placement is home). */
  placeAtHomes(computeNodes: readonly NodeId[]): void {
    if (this.options.placement !== 'home') return;
    this.homes = [...computeNodes];
  }

  // ---- reading the agents (tests, diagnostics, recovery reports) ----

  /** The lock's agent state here. */
  stateOf(lid: LockId): AgentState {
    return this.states.get(lid) ?? NO_AGENT;
  }

  /** The lock's live agent here, if any. */
  agentOf(lid: LockId): AgentValue | undefined {
    const s = this.states.get(lid);
    return s?.kind === 'live' ? s.agent : undefined;
  }

  /** The lock's pending agent here (handed on, not yet answered), if any. */
  pendingAgentOf(lid: LockId): AgentValue | undefined {
    const s = this.states.get(lid);
    return s?.kind === 'pending' ? s.agent : undefined;
  }

  /** Locks with a live agent here, with it. */
  liveAgents(): [LockId, AgentValue][] {
    return [...this.states].flatMap(([lid, s]) => (s.kind === 'live' ? [[lid, s.agent] as [LockId, AgentValue]] : []));
  }

  /** Locks with a pending agent here, with it. */
  pendingAgents(): [LockId, AgentValue][] {
    return [...this.states].flatMap(([lid, s]) => (s.kind === 'pending' ? [[lid, s.agent] as [LockId, AgentValue]] : []));
  }

  /**
   * Puts an agent here as recovery's S2 orders it (incarnation 0 unless given), replacing what the
   * lock had. Also how a harness or a test builds a state without running the protocol to it.
   */
  restoreAgent(lid: LockId, order: AgentOrder): void {
    this.states.delete(lid);
    const agent: AgentValue = { id: this.nextAgentId++, mode: order.mode, inca: order.inca ?? 0, holders: new Set(order.holders.map((h) => key(h.mid, h.task))), wqueue: order.wqueue.map((w) => ({ mid: w.mid, task: w.task, mode: w.mode })), anchors: NO_ANCHORS };
    this.apply(lid, { type: 'restored', agent });
  }

  /** Test-only: sets a lock's state directly (e.g. an agent handed on, to check what the checks see). */
  setStateForTest(lid: LockId, state: AgentState): void {
    if (state.kind === 'none') this.states.delete(lid);
    else this.states.set(lid, state);
  }

  // ---- the tasks of this machine's clients ----

  /** `task` waits for its GRANT (or the end of its abort) through `listener`. */
  listen(task: number, listener: TaskListener): void {
    this.listeners.set(task, listener);
  }

  listenerOf(task: number): TaskListener | undefined {
    return this.listeners.get(task);
  }

  /** The tasks of this machine waiting for a GRANT or for their abort to end. */
  waitingTasks(): number[] {
    return [...this.listeners.keys()];
  }

  /** Whether an agent recorded `task`'s request (its abort must go to the agent). */
  isRecorded(task: number): boolean {
    return this.recordedTasks.has(task);
  }

  // ---- local paths (④–⑦), called by clients of this machine ----

  tryLocalAcquire(lid: LockId, task: number, mode: LockMode): 'granted' | 'queued' | 'no-agent' {
    return this.apply(lid, { type: 'local-acquire', task, mode }) as 'granted' | 'queued' | 'no-agent';
  }

  /** Removes a locally queued waiter that gave up; false if it is not queued here. */
  abortLocal(lid: LockId, task: number): boolean {
    if (this.agentOf(lid) === undefined) return false;
    return this.apply(lid, { type: 'local-abort', task }) === 'removed';
  }

  /**
   * Whether this machine has, or may be about to receive, an agent for `lid` that is not `task`'s
   * own lost ① grant: a live or pending agent, a transfer waiting for its entries, or another local
   * task still expecting a GRANT for the lock. The switch's timeout-free rule (§5.2) frees a lock
   * whose agent machine sends an unreached abort, so such an abort must go to the agent instead.
   */
  otherInterest(lid: LockId, task: number): boolean {
    if (this.states.has(lid) || this.transfers.hasGrantFor(lid)) return true;
    for (const [t, listener] of this.listeners) if (t !== task && listener.lock === lid) return true;
    return this.timeoutFreeUnsafe(lid, task);
  }

  /**
   * Whether an abort of `task` for `lid` sent now must not take the switch's timeout-free (§5.2),
   * which frees whatever lifetime has mid = this machine and inca 0: the decider cannot tell two
   * tasks of one machine apart (18 bits per lock). The link is FIFO into the switch, so two kinds
   * of packet still unanswered on it are decided first and may put another lifetime there:
   * - an ACQUIRE of another local task (the client's, or a copy this machine bounced; DUP and
   *   GRANTED copies are only routed) that may find the lock free: its ① grant would be the
   *   lifetime freed, while its agent lives on here and its later FREE frees the lock again under
   *   the next holder (both-links sweep at 10 %, seeds 8, 2, 100; 2 %, seed 95). A copy cannot find
   *   the lock free if the switch routed one of this machine's packets back here after the last
   *   ender before it (LifetimeMarks); without that exemption, exclusive copies circling a lock
   *   orphaned here (① GRANT lost, ② holders since) kept the repairing abort from ever being sent;
   * - another abort-only RELEASE of the lock: one timeout-free per lock at a time. Two of them
   *   behind an ingress gap freed the orphan and then a transfer to a local task accepted between
   *   them (seed 56), or had two refusals rebuild an agent twice (seeds 393, 500).
   * While this holds the abort goes to the agent (REACHED) and circles; once the packet is answered
   * (a ① GRANT installs the agent here, which then takes the abort) the timeout-free may go.
   * Packets sent after the abort are decided after it and cannot be taken for the lifetime it ends.
   */
  timeoutFreeUnsafe(lid: LockId, task: number): boolean {
    // entries of a transfer to this machine that came lately without their GRANT: the decider may
    // have accepted it, its GRANT copy lost (the reissue's seed-109 guard, for the client's abort
    // too: FAULTS_10 wide seed 202 freed such a lifetime through a refused abort's empty agent)
    if (this.transfers.hasEntriesFor(lid, this.clock.nowNs() - this.stuck.afterNs)) return true;
    return this.link.someOutstanding(
      (q) =>
        q.lock === lid &&
        q.machine === this.machine &&
        ((q.type === 'acquire' && q.task !== task && (q.flags & (FLAG_DUP | FLAG_GRANTED)) === 0 && this.marks.mayFindFree(lid, q.seq)) ||
          (q.type === 'release' && (q.flags & (FLAG_ABORT | FLAG_REACHED | FLAG_BOUNCED | FLAG_DUP)) === FLAG_ABORT)),
    );
  }

  /** The client sent an abort-RELEASE of `lid` as `seq`; unreached, it may end a lifetime here (LifetimeMarks). */
  abortSent(lid: LockId, seq: number, reached: boolean): void {
    if (!reached) this.marks.ender(lid, seq);
  }

  /** Whether an agent-carrying GRANT for `lid` arrived here and still waits for its transfer entries (an agent in flight). */
  awaitingTransfer(lid: LockId): boolean {
    return this.transfers.hasGrantFor(lid);
  }

  /** `switchShared`: the hold is a ② grant (see agent-state.ts releaseCore). */
  tryLocalRelease(lid: LockId, task: number, acquireSpan?: SpanContextRef, switchShared = false): 'done' | 'no-agent' | 'not-found' {
    return this.apply(lid, { type: 'local-release', task, switchShared, acquireSpan }) as 'done' | 'no-agent' | 'not-found';
  }

  // ---- the agents' state machine ----

  /** Feeds one event to the lock's agent and carries out what it asks for, in order. */
  private apply(lid: LockId, event: AgentEvent): AgentOutcome {
    const next = step(this.rules, lid, this.states.get(lid) ?? NO_AGENT, event);
    if (next.state.kind === 'none') this.states.delete(lid);
    else this.states.set(lid, next.state);
    for (const action of next.actions) this.perform(lid, action);
    return next.outcome;
  }

  private perform(lid: LockId, action: AgentAction): void {
    switch (action.kind) {
      case 'send': {
        const hook = action.onAck;
        const onAck = hook ? (ack: LockPacket) => this.answered(lid, hook.kind, hook.id, ack) : undefined;
        let packet = action.packet;
        if (action.handover) {
          const span = startHandoverSpan(this.options.trace, this.machine, lid, action.handover.next, action.handover.releaser);
          if (span) packet = { ...packet, trace: span };
        }
        const seq = this.link.send(packet, onAck);
        if (action.ender) this.marks.ender(lid, seq);
        return;
      }
      case 'send-reached':
        this.port.send(action.packet);
        return;
      case 'note-recorded':
        this.recordedTasks.add(action.task);
        return;
      case 'deliver':
        this.deliver(action.grant);
        return;
      case 'count':
        this.count[action.counter satisfies AgentCounter]++;
        return;
      case 'void-old-handoffs':
        this.voidOldHandoffs(lid);
        return;
      case 'watch-waiter':
        this.watchdog.noteWaiter(lid, action.agent);
        return;
      case 'watch-local-holder':
        this.watchdog.noteLocalHolder(lid, action.holder);
        return;
      case 'watch-refused':
        this.watchdog.noteRefused(lid);
        return;
      case 'watch-clear':
        this.watchdog.clear(lid);
        return;
      case 'starve-check':
        this.starvation.maybeStart(lid, action.agent);
        return;
      case 'starve-writer-queued':
        this.starvation.writerQueuedLocally(lid, action.agent);
        return;
      case 'starve-stop':
        this.starvation.stop(lid);
        return;
      case 'backoff-forget':
        this.backoff.forget(lid);
        return;
      case 'stuck-write-off':
        this.stuck.writeOff(action.packet);
        return;
      case 'stuck-restart':
        this.stuck.restart(lid);
        return;
    }
  }

  /** The ACK of a FREE (freed or not) or of a transfer GRANT that the agent `id` sent. */
  private answered(lid: LockId, kind: 'free-answered' | 'grant-answered', id: number, ack: LockPacket): void {
    if (kind === 'free-answered') this.apply(lid, { type: 'free-answered', id, freed: ackStatusOf(ack.flags) === 'freed' });
    else if (ack.type === 'ack') this.apply(lid, { type: 'grant-answered', id });
  }

  /**
   * A FREE / transfer GRANT of an earlier agent of the lock that this machine still resends is
   * void once a new agent is installed here: resent, it would be decided against the lock's *new*
   * state — refused (§13.1 re-refusal) and restore the old agent next to this one (seed 52), or, if
   * the switch never saw it, accepted (an exclusive FREE has no incarnation check) and free the new
   * lifetime. Usually the switch accepted it and only the ACK was lost, but not always: the earlier
   * lifetime may have ended otherwise while the packet waited behind an ingress gap (both-links
   * seed 2). So it is not dropped from the link — its seq would stay a hole the switch waits for,
   * dropping every later packet of this machine as a gap — but voided: the same seq now carries a
   * filler the switch only routes back here (FLAG_VOID), and the entry ends with its ACK.
   */
  private voidOldHandoffs(lid: LockId): void {
    const old = (q: LockPacket): boolean => q.lock === lid && (q.type === 'free' || (q.type === 'grant' && (q.flags & FLAG_HAS_AGENT) !== 0));
    this.count.voidedOnInstall += this.link.voidOutstanding(old, (q) => ({ type: 'transfer', lock: q.lock, machine: this.machine, task: 0, mode: q.mode, incarnation: 0, flags: FLAG_VOID, dst: this.machine }));
  }

  // ---- receive path ----

  private receive(p: LockPacket): void {
    if (p.lock >= (this.options.switchCapacity ?? Infinity)) return; // a fallback manager's packet (§6.6)
    if (this.quarantined.active && this.quarantined.has(p.lock) && this.absorbQuarantined(p)) return;
    if (p.type === 'ack') {
      if (p.dst !== this.machine) return;
      if ((p.flags & FLAG_REACHED) !== 0) this.recordedTasks.add(p.task); // an agent recorded a bounced copy of a local request
      else this.link.acknowledge(p.seq, p);
      return;
    }
    const refusal = (p.flags & FLAG_INVALID) !== 0;
    if (refusal) {
      // a refusal answers one of this machine's FREE/GRANT/abort-RELEASE packets: a second copy
      // (duplicated on the wire, or a stale one after the agent moved on) must not restore anything
      const resent = p.agent === this.machine && this.link.resent(p.lock, p.seq);
      if (p.agent !== this.machine || !this.link.acknowledge(p.seq, p)) {
        this.count.duplicates++;
        return;
      }
      return this.onRefused(p, resent);
    }
    if (p.type === 'grant' && p.agent === undefined) {
      // ①/② GRANTs come from the switch unsequenced: the one request id a GRANT names is the dedup key
      if (this.dedup.isSwitchGrantDuplicate(p, this.clock.nowNs())) {
        this.count.duplicates++;
        return;
      }
      // the GRANT is the ACK of every copy of the request this machine still resends (pool/request-copies.ts)
      const answered = answeredBySwitchGrant(this.machine, p);
      let decidedSeq: number | undefined; // the copy the decider granted is one of these (the latest is a safe anchor)
      for (const q of this.link.outstandingPackets()) {
        if (!answered(q)) continue;
        this.link.acknowledge(q.seq, p);
        decidedSeq = Math.max(decidedSeq ?? 0, q.seq);
      }
      if ((p.flags & FLAG_HAS_AGENT) !== 0) return this.onSwitchGrant(p, decidedSeq);
      return this.deliver(p);
    }
    // everything else is a sequenced packet from some server: dedup, then process and ACK
    const src = p.agent ?? p.machine;
    // one of this machine's own packets that the switch routed back here as new: held here then
    if (src === this.machine && (p.type === 'acquire' || p.type === 'release') && (p.flags & (FLAG_DUP | FLAG_GRANTED)) === 0) this.marks.heldAt(p.lock, p.seq);
    // The decider's ② copy and a DUP copy of the same ACQUIRE (its requester resent it before the
    // GRANT came back: RTO short against the path) share src:seq; whichever comes first must not
    // hide the other, or a DUP copy recorded as a ③ waiter swallows the ② grant: the agent's inca
    // stays one behind, its transfer is refused, and the holder's RELEASE only removes a waiter —
    // an agent with no holder and the refused grantee at its head, for ever (see onAcquire).
    const granted = p.type === 'acquire' && (p.flags & FLAG_GRANTED) !== 0;
    const seen = this.dedup.seenOf(this.streamOf(p), p.seq, granted);
    if (seen !== undefined && !this.options.mutantNoDuplicateSuppression) {
      this.count.duplicates++;
      // the re-ACK's DUP bit: see reAckDup (pool/receive-dedup.ts)
      this.ack(p, src, seen.status === 'accepted' ? 'duplicate' : seen.status, reAckDup(seen, (p.flags & FLAG_DUP) !== 0));
      return;
    }
    const status = this.process(p);
    this.dedup.record(this.streamOf(p), p.seq, status, granted, this.clock.nowNs(), (p.flags & FLAG_DUP) !== 0);
    this.ack(p, src, status);
  }

  private process(p: LockPacket): AckStatus {
    switch (p.type) {
      case 'acquire':
        return this.onAcquire(p);
      case 'release':
        return this.onRelease(p);
      case 'grant':
        if ((p.flags & FLAG_HAS_AGENT) === 0) {
          this.deliver(p);
          return 'accepted';
        }
        this.transfers.addGrant(p);
        this.completeTransfers();
        return 'accepted';
      case 'transfer':
        if ((p.flags & FLAG_VOID) !== 0) return 'accepted'; // a filler for a void FREE / GRANT (install)
        this.transfers.addEntry(p, this.clock.nowNs());
        this.completeTransfers();
        return 'accepted';
      default:
        return 'accepted';
    }
  }

  /**
   * A sequenced ACQUIRE (③ forwarded, ② GRANTED copy). A ② copy reaching an exclusive agent is
   * dropped (agent-state.ts): a ② grant needs the lock held shared at the agent's machine, and that
   * shared lifetime cannot end (accepted FREE / transfer) before the agent has counted the copy —
   * unless its home wrote the copy off as lost (writeOffLostCopy) while it was still circling.
   * Counted by a later exclusive agent it made a shared holder nobody releases (and an inca ahead of
   * the decider's): the lock never freed (wide sweep, 2% seeds 16, 24; 10% seed 27). A written-off
   * copy reaching a later *shared* agent cannot be told from a fresh one (the decider's ② copy of a
   * bounced ③ ACQUIRE also carries BOUNCED and the bouncer as src): that needs the copy to name its
   * home, as the ② GRANT does.
   */
  private onAcquire(p: LockPacket): AckStatus {
    // a ② copy this pool already wrote off as lost (see onRelease) arrived after all: count nothing
    if ((p.flags & FLAG_GRANTED) !== 0 && this.stuck.takeWrittenOff(p)) return 'duplicate';
    const givenUp = this.givenUp.has(p.lock, p.machine, p.task);
    const requesterSeq = (p.flags & FLAG_DUP) !== 0 ? this.requesterSeqOf(p) : undefined;
    const outcome = this.apply(p.lock, { type: 'acquire', packet: p, givenUp, requesterSeq });
    return outcome === 'bounce' ? this.bounce(p) : (outcome as AckStatus);
  }

  /** The seq of a duplicate ACQUIRE as its requester numbered it, when known (agent-state.ts grantedDuplicate). */
  private requesterSeqOf(p: LockPacket): number | undefined {
    const src = p.agent ?? p.machine;
    if ((p.flags & FLAG_BOUNCED) === 0) return src === p.machine ? p.seq : undefined;
    // a copy bounced by this machine carries this machine's seq: the bounce remembered the requester's
    return src === this.machine ? this.bouncedOrigins.seqOf(p.lock, p.machine, p.task) : undefined;
  }

  private onRelease(p: LockPacket): AckStatus {
    if (this.apply(p.lock, { type: 'release', packet: p }) === 'accepted') {
      this.stuck.resolved(p);
      return 'accepted';
    }
    if (this.recordedElsewhere(p)) {
      this.count.staleReleases++;
      this.stuck.resolved(p);
      return 'duplicate';
    }
    const a = this.agentOf(p.lock);
    if (this.stuck.longEnough(p, this.clock.nowNs())) {
      if (!a && this.mayReissueAbort(p)) return this.reissueAbort(p);
      if (a && (p.flags & FLAG_GRANTED) !== 0) return this.writeOffLostCopy(p);
      if (a && (p.flags & FLAG_ABORT) !== 0) {
        // An aborted request this agent never recorded. It is NOT written off as a lost ② grant
        // (which would bump inca): nothing proves the decider counted it, and the usual story is a
        // stale abort whose grant was already released elsewhere — e.g. a late transfer GRANT for
        // the aborted task, released at once on its machine as a stray. Bumping inca then lets the
        // agent's count run ahead of the decider's; after the next real ② grant they match while
        // that holder's copy is still in flight, the FREE is accepted and the lock is handed out
        // exclusively under a shared holder (wide sweep, seed 29). A wrong drop costs liveness
        // only (the FREE stays refused, acquires of the lock time out with a typed error, recovery
        // rebuilds it); a wrong bump costs exclusion.
        this.count.droppedAborts++;
        this.noteGivenUp(p.lock, p.machine, p.task);
        return 'accepted';
      }
    }
    return this.bounce(p);
  }

  /**
   * The stall found by the faulty sweep: a ③ ACQUIRE bounced once (so its requester counts it as
   * REACHED), the decider decided the bounced copy again as ① and its GRANT — the only copy of the
   * new agent — was lost. The decider now names this machine as the agent's home, no agent exists
   * anywhere, and the requester's REACHED abort-RELEASE (like every other packet for the lock)
   * circles between the decider and this pool forever. Only the requester's own machine can tell:
   * its own aborted request comes back here with no agent, no pending agent and no transfer on the
   * way. It then sends the abort again without REACHED, so the decider's timeout-free rule (§5.2)
   * frees the lock, or refuses and has this machine build an empty agent for the ② holders. The
   * same repairs a lost refusal of a timeout-free: the retransmitted abort is a duplicate, which the
   * decider only routes, so it would circle here too.
   */
  private mayReissueAbort(p: LockPacket): boolean {
    // Not while another local task's request is recorded in some agent's queue: the decider may
    // name this machine because a transfer GRANT to that task is on its way (first copy lost, the
    // resend pending), and the timeout-free would free a lock just handed over (wide sweep, 10%
    // faults, seed 115). Waiting is bounded: that task is granted, or aborts within T_ACQ.
    if (p.machine !== this.machine || (p.flags & FLAG_ABORT) === 0 || this.pendingAgentOf(p.lock) !== undefined || this.transfers.hasGrantFor(p.lock)) return false;
    // Nor while entries of a transfer of the lock to this machine arrived lately without their
    // GRANT: the decider accepted it and its first copy was lost (the sender resends it every RTO),
    // and the grantee may be recorded out of this machine's sight — the ACK of its bounced copy
    // lost (wide sweep, 10% faults, seeds 37 and 109). Entries of a refused transfer age out.
    if (this.transfers.hasEntriesFor(p.lock, this.clock.nowNs() - this.stuck.afterNs)) {
      this.count.reissueDeferred++;
      return false;
    }
    for (const [t, listener] of this.listeners) if (t !== p.task && listener.lock === p.lock && this.recordedTasks.has(t)) return false;
    // Nor while another local ACQUIRE of the lock, or another timeout-free, is undecided: its
    // lifetime would be the one the timeout-free ends (see timeoutFreeUnsafe). The abort keeps
    // circling; once the packet is answered, an agent arrived here takes the abort itself.
    if (this.timeoutFreeUnsafe(p.lock, p.task)) {
      this.count.abortsBehindAcquire++;
      return false;
    }
    return true;
  }

  private reissueAbort(p: LockPacket): AckStatus {
    this.count.reissuedAborts++;
    const seq = this.link.send({ type: 'release', lock: p.lock, machine: this.machine, task: p.task, mode: p.mode, incarnation: 0, flags: FLAG_ABORT }, (ack) => this.abortAnswered(p.task, ack));
    this.marks.ender(p.lock, seq);
    return 'accepted';
  }

  /**
   * A ② holder's RELEASE that names another machine as its grant's home: it is stale, never a
   * release whose ② copy was lost. The decider routes a RELEASE to `mid`, so it reached this
   * machine only after the home agent's lifetime had ended — by an accepted FREE or transfer (the
   * decider's inca is ahead of that agent's until the copy is counted, so nothing else can end it)
   * and so only after its holders, this one included, were released. What arrives is a
   * retransmitted (DUP) or bounced copy of a RELEASE processed there. Writing it off here bumped
   * this agent's inca one ahead of the decider's, and its next FREE/transfer passed under a ②
   * holder (wide sweep, 10% faults, seeds 10, 27, 145). A RELEASE at its home is never stale for
   * this reason: a copy of one processed there is caught by the receive dedup, and bounced copies
   * originate only at the home (elsewhere they end here), while its agent lives.
   */
  private recordedElsewhere(p: LockPacket): boolean {
    if ((p.flags & FLAG_GRANTED) === 0) return false;
    const home = grantHomeOf(p);
    return home !== undefined && home !== this.machine;
  }

  /**
   * §13.4, one lost ② copy: the decider counted a shared grant whose GRANTED copy never reached
   * the agent, so the holder's RELEASE (flagged GRANTED by its client) finds nobody and the
   * incarnations never match again. After `stuckAfterNs` the agent counts the copy and the release
   * together; should the copy turn up later after all, it is ignored (`writtenOff`). Only at the
   * grant's home (see recordedElsewhere).
   */
  private writeOffLostCopy(p: LockPacket): AckStatus {
    this.stuck.writeOff(p);
    this.apply(p.lock, { type: 'write-off', packet: p });
    return 'accepted';
  }

  /** ① the switch granted a free lock: the GRANT carries an empty agent. */
  private onSwitchGrant(p: LockPacket, decidedSeq?: number): void {
    const listener = this.listeners.get(p.task);
    if (listener === undefined && this.discardedTasks.has(p.task)) return;
    this.install(p, [], decidedSeq);
  }

  /** Records how this machine's abort-RELEASE of `task` was answered (client and reissued aborts). */
  abortAnswered(task: number, ack: LockPacket): void {
    if (ack.type === 'ack' && ackStatusOf(ack.flags) === 'freed') {
      this.discardedTasks.add(task);
      // A late GRANT of this task taken silently while the abort was out (spec §5.2: "the abort
      // will release it"): this abort was a timeout-free and released nothing here (agent-state.ts)
      this.apply(ack.lock, { type: 'abort-freed', task });
      // other aborts of the lock circling here must not reissue at once: a bounced copy may be
      // decided again as ① to this machine, its GRANT still on the way (wide sweep, 10%, seed 364)
      this.stuck.restart(ack.lock);
    }
  }

  private noteGivenUp(lid: LockId, mid: NodeId, task: number): void {
    this.givenUp.note(lid, mid, task);
  }

  private completeTransfers(): void {
    for (const { grant, queue } of this.transfers.takeComplete()) this.install(grant, queue);
  }

  /**
   * Installs an agent carried by a GRANT (① or ⑧); see agent-state.ts. `decidedSeq`: for a ①
   * GRANT, this machine's ACQUIRE copy the decider granted. The lifetime began when the decider
   * took that ACQUIRE or this machine's own transfer GRANT (a self-transfer), if it was one: what
   * this machine sent after it is of the new lifetime. Else (a transfer from elsewhere) only what
   * it sends from now on is known to be.
   */
  private install(g: LockPacket, queue: Waiter[], decidedSeq?: number): void {
    const self = g.agent === this.machine && g.seq > 0 ? g.seq : decidedSeq;
    this.apply(g.lock, { type: 'install', grant: g, queue, newId: this.nextAgentId++, anchorSeq: self ?? this.link.lastSeq(g.lock) });
  }

  /** A GRANT reaches its task; a GRANT nobody waits for is released at once (spec §5.2 stray grants). */
  private deliver(g: LockPacket): void {
    if (g.machine !== this.machine) return;
    const listener = this.listeners.get(g.task);
    if (listener) {
      listener.granted(g);
      return;
    }
    if (this.tryLocalRelease(g.lock, g.task) !== 'done') {
      this.link.send({ type: 'release', lock: g.lock, machine: this.machine, task: g.task, mode: g.mode, incarnation: 0, flags: 0 });
    }
  }

  /**
   * FREE or transfer GRANT refused (or a timeout-free refused): restore the agent and wait for the
   * delayed ② copies. `resent`: the refused packet went out more than once, so the refusal may
   * answer an earlier copy (see agent-state.ts refused).
   */
  private onRefused(p: LockPacket, resent: boolean): void {
    const movedOn = resent && this.options.mutantTrustReRefusal !== true && this.mayHaveMovedOn(p);
    this.apply(p.lock, { type: 'refused', packet: p, newId: this.nextAgentId++, resent, movedOn });
  }

  /**
   * Whether the lock may have begun a new lifetime at this machine since the first copy of `p` (a
   * FREE / agent GRANT of this machine, now refused again), had that copy been accepted: a
   * transfer to this machine is under way; `p` handed the lock to a shared task here (that is
   * such a lifetime); or an own ACQUIRE sent after `p`, still unanswered, may be its ① grant with
   * the GRANT missing. After a FREE or a transfer elsewhere any such ACQUIRE may be; after a
   * transfer to an exclusive task here the lock is free again only after another ender of this
   * machine (its abort's timeout-free), so only an ACQUIRE sent after one.
   */
  private mayHaveMovedOn(p: LockPacket): boolean {
    // entries from elsewhere that came lately (as in mayReissueAbort: a refused transfer's age out;
    // a self-transfer's own entries are `p`'s, judged below)
    if (this.transfers.hasGrantFor(p.lock) || this.transfers.hasEntriesFor(p.lock, this.clock.nowNs() - this.stuck.afterNs, this.machine)) return true;
    const toHere = p.type === 'grant' && p.machine === this.machine;
    if (toHere && p.mode === 'shared') return true;
    return this.link.someOutstanding(
      (q) =>
        q.lock === p.lock &&
        q.type === 'acquire' &&
        q.machine === this.machine &&
        q.seq > p.seq &&
        (q.flags & (FLAG_DUP | FLAG_GRANTED)) === 0 &&
        (!toHere || this.marks.enderBetween(p.lock, p.seq, q.seq)),
    );
  }

  private bounce(p: LockPacket): AckStatus {
    this.count.bounced++;
    this.watchdog.noteBounce(p.lock);
    const { seq: _seq, agent: _agent, ...rest } = p;
    const packet = { ...rest, flags: p.flags | FLAG_BOUNCED };
    if (p.type === 'acquire' && (p.flags & (FLAG_DUP | FLAG_BOUNCED | FLAG_GRANTED)) === FLAG_DUP && (p.agent ?? p.machine) === p.machine) {
      this.bouncedOrigins.note(p.lock, p.machine, p.task, p.seq); // see agent-state.ts grantedDuplicate
    }
    // a bounced copy of this machine's own ACQUIRE: its requester only saw the first hop's ACK,
    // so whether an agent recorded it is learned here (see mayReissueAbort)
    const onAck = p.type === 'acquire' && p.machine === this.machine ? (ack: LockPacket) => this.noteRecorded(p.task, ack) : undefined;
    const delayNs = this.backoff.delayNs(p.lock, this.clock.nowNs());
    if (delayNs === 0) this.link.send(packet, onAck);
    else {
      const bouncedOn = this.link;
      void this.clock.sleep(delayNs).then(() => {
        if (this.stopped) return;
        const link = deferredBounceLink(bouncedOn, this.link); // none after a recovery replaced it
        if (!link) return void this.count.staleBounces++;
        link.send(packet, onAck);
      });
    }
    return 'bounced';
  }

  /**
   * The ACK of a request of `task` (its ACQUIRE, or a copy this machine bounced): ACCEPTED means an
   * agent queued it; BOUNCED (not DUP) by another machine means it travels on and may be queued
   * out of sight. Either way a transfer GRANT to it may come (see mayReissueAbort).
   */
  noteRecorded(task: number, ack: LockPacket): void {
    if (ack.type !== 'ack') return;
    const status = ackStatusOf(ack.flags);
    const travels = status === 'bounced' && (ack.flags & FLAG_DUP) === 0 && ack.machine !== this.machine;
    if (status === 'accepted' || travels) this.recordedTasks.add(task);
  }

  /** A local task's attempt is over (granted, or its abort answered): forget what it waited for. */
  endTask(task: number): void {
    this.listeners.delete(task);
    this.recordedTasks.delete(task);
  }

  /** `dup`: the ACK's DUP bit, by default the packet's own (see the re-ACK in receive). */
  private ack(p: LockPacket, src: NodeId, status: AckStatus, dup = (p.flags & FLAG_DUP) !== 0): void {
    const flags = ackFlags(status) | (dup ? FLAG_DUP : 0);
    if (src === this.machine) {
      this.link.acknowledge(p.seq, { ...p, type: 'ack', flags });
      return;
    }
    // the DUP bit tells a requester that a BOUNCED status does not prove its request reached an agent (§5.2)
    this.port.send({ type: 'ack', lock: p.lock, machine: this.machine, task: p.task, mode: p.mode, incarnation: 0, seq: p.seq, flags, dst: src });
  }

  // ---- recovery (S1/S2 hooks) ----
  // Owned by the recovery work (src/recovery); spec §7.2.

  /** Clients of this machine that can say what they hold and wait for (spec §2.3), for S1. */
  private readonly recoveryClients = new Set<RecoveryClientView>();
  private paused = false;
  private discarded = 0;

  /** A client that keeps records joins (or leaves) S1's report and S2's aborts. */
  addRecoveryClient(client: RecoveryClientView): void {
    this.recoveryClients.add(client);
  }

  removeRecoveryClient(client: RecoveryClientView): void {
    this.recoveryClients.delete(client);
  }

  /** The clients that keep records, in the order they joined. */
  recoveryClientList(): RecoveryClientView[] {
    return [...this.recoveryClients];
  }

  /** True between S1 (pause) and the end of S2 on this machine. */
  get recoveryPaused(): boolean {
    return this.paused;
  }

  /** Packets dropped because they were sent while paused (S2's state supersedes them). */
  get recoveryDiscarded(): number {
    return this.discarded;
  }

  /**
   * S1, first half: no lock operation of this machine reaches the network any more. The link's
   * retransmission buffer is dropped (spec S0) and every packet sent from now on is discarded;
   * packets still arriving are processed, so the report taken after the drain includes them.
   */
  pauseForRecovery(): void {
    this.paused = true;
    this.swapLink({ machine: this.machine, send: () => void this.discarded++, onPacket: () => () => undefined });
  }

  /** S1, second half: this machine's agents (live and pending) and its clients' requests. */
  recoveryReport(): ServerReport {
    const record = (lid: LockId, a: AgentValue, state: 'live' | 'pending'): AgentRecord => ({
      lid,
      machine: this.machine,
      mode: a.mode,
      holders: [...a.holders].map((h) => {
        const [mid, task] = h.split(':');
        return { mid: Number(mid), task: Number(task) };
      }),
      wqueue: a.wqueue.map((w) => ({ mid: w.mid, task: w.task, mode: w.mode })),
      state,
    });
    const agents = [...this.liveAgents().map(([lid, a]) => record(lid, a, 'live')), ...this.pendingAgents().map(([lid, a]) => record(lid, a, 'pending'))];
    const clients = [...this.recoveryClients].flatMap((c) => c.recoveryRecords());
    return { machine: this.machine, agents, clients };
  }

  /**
   * S2 on this machine: every agent not in `orders` is deleted, the ordered ones are installed at
   * incarnation 0, in-flight transfers and the dedup window are forgotten (sequence numbers restart
   * with a new link, which the switch's S3 matches), then granted tasks are woken and dropped ones
   * aborted. Lock operations resume with the new link.
   */
  applyRecovery(orders: MachineOrders): void {
    this.swapLink(this.port);
    this.states.clear(); // S2 frees a lock with neither holders nor waiters: nothing stays parked
    this.dedup.clearSequenced();
    this.transfers.clear();
    this.starvation.clear();
    this.discardedTasks.clear();
    this.recordedTasks.clear();
    this.marks.clear();
    for (const r of orders.agents) this.restoreAgent(r.lid, r);
    for (const order of orders.abort) {
      this.listeners.delete(order.task);
      for (const c of this.recoveryClients) c.recoveryAbort(order.lid, order.task, order.reason);
    }
    this.paused = false;
    for (const w of orders.wake) {
      const grant: LockPacket = { type: 'grant', lock: w.lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: 0, seq: 0, flags: 0 };
      this.listeners.get(w.task)?.granted(grant);
    }
  }

  /** This machine has failed (sim and tests): nothing it does reaches the network again, nothing reaches it. */
  failStop(): void {
    this.stop();
    this.paused = true;
    this.swapLink({ machine: this.machine, send: () => void this.discarded++, onPacket: () => () => undefined });
  }

  /** Recovery is the one place that replaces the link (a new sequence space). */
  private swapLink(port: SwitchPort): void {
    this.link.stop();
    this.currentLink = createSequencedLink(this.machine, port, this.clock, this.options);
    this.currentLink.intercept = (p) => this.interceptQuarantined(p);
  }

  /**
   * Recovery S1: the requests of this machine still unanswered on the link settle as accepted
   * (their tasks are in the report; S2 decides them), so nothing waits on the old link.
   */
  settleOutstandingAcquires(): number {
    let settled = 0;
    for (const p of this.link.outstandingPackets()) {
      if (p.type !== 'acquire' || p.machine !== this.machine || !this.listeners.has(p.task)) continue;
      const ack: LockPacket = { ...p, type: 'ack', flags: ackFlags('accepted'), dst: this.machine };
      if (this.link.acknowledge(p.seq, ack)) settled++;
    }
    return settled;
  }

  // ---- per-lock repair (spec §12.9: T_STUCK watchdog, S1–S3 for one lock) ----
  // Driven by recovery/lock-repair.ts; the reasoning is in recovery/README.md.

  /** Locks under a per-lock repair on this machine (pool/quarantine.ts). */
  private readonly quarantined = new LockQuarantine();

  /**
   * A per-lock repair begins: from now until `applyLockRepair`, nothing of `lid` leaves this
   * machine (sends are answered locally as accepted, FREEs as freed) and every arriving packet of
   * it is acknowledged and dropped, so the lock's packets in flight die out while every other lock
   * goes on. Local state of the lock may still change (a local grant or release): S1 reads it at the end.
   */
  quarantineLock(lid: LockId): void {
    this.quarantined.touch(lid, this.clock.nowNs());
    this.starvation.stop(lid);
  }

  /** What the repair's drain waits for: this machine's unacknowledged packets of `lid`, and when the last one of it arrived. */
  quarantineState(lid: LockId): { readonly unacked: number; readonly lastArrivalNs: number } {
    return { unacked: this.link.outstandingPackets().filter((q) => q.lock === lid).length, lastArrivalNs: this.quarantined.lastArrivalNs(lid) };
  }

  /** S1 for one lock: its agents here (live and pending) and the local clients' records of it. */
  lockReport(lid: LockId): ServerReport {
    const full = this.recoveryReport();
    return { machine: this.machine, agents: full.agents.filter((a) => a.lid === lid), clients: full.clients.filter((c) => c.lid === lid) };
  }

  /**
   * S2 for one lock: the lock's agent, pending agent, transfers in assembly and bookkeeping here are
   * replaced by the ordered agent (incarnation 0, as S3 writes the decider); tasks are aborted and
   * woken as ordered; the quarantine ends. Sequence windows, the dedup window and other locks stay.
   */
  applyLockRepair(lid: LockId, orders: MachineOrders): void {
    this.states.delete(lid);
    this.transfers.forgetLock(lid);
    this.starvation.stop(lid);
    this.backoff.forget(lid);
    this.stuck.restart(lid);
    this.watchdog.clear(lid);
    for (const r of orders.agents) if (r.lid === lid) this.restoreAgent(lid, r);
    // S2 aborts only requests their clients gave up (no machine failed): nobody waits to be failed
    for (const order of orders.abort) if (order.lid === lid) this.listeners.delete(order.task);
    this.quarantined.end(lid);
    for (const w of orders.wake) {
      if (w.lid !== lid) continue;
      const grant: LockPacket = { type: 'grant', lock: w.lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: 0, seq: 0, flags: 0 };
      this.listeners.get(w.task)?.granted(grant);
    }
  }

  /** The link's answer to a send of a quarantined lock (see quarantineLock): accepted, or freed for a FREE. */
  private interceptQuarantined(p: Omit<LockPacket, 'seq' | 'agent'>): LockPacket | undefined {
    if (!this.quarantined.active || !this.quarantined.has(p.lock)) return undefined;
    return { ...p, type: 'ack', seq: 0, flags: ackFlags(p.type === 'free' ? 'freed' : 'accepted'), dst: this.machine };
  }

  /** An arriving packet of a quarantined lock: ACKs go on as usual (false); anything else is acknowledged and dropped. */
  private absorbQuarantined(p: LockPacket): boolean {
    this.quarantined.touch(p.lock, this.clock.nowNs());
    if (p.type === 'ack') return false;
    if ((p.flags & FLAG_INVALID) !== 0) {
      if (p.agent === this.machine) this.link.acknowledge(p.seq, p);
      return true;
    }
    if (p.type === 'grant' && p.agent === undefined) {
      const answered = answeredBySwitchGrant(this.machine, p);
      for (const q of this.link.outstandingPackets()) if (answered(q)) this.link.acknowledge(q.seq, p);
      return true;
    }
    const src = p.agent ?? p.machine;
    const granted = p.type === 'acquire' && (p.flags & FLAG_GRANTED) !== 0;
    const seen = this.dedup.statusOf(this.streamOf(p), p.seq, granted);
    if (seen === undefined) this.dedup.record(this.streamOf(p), p.seq, 'accepted', granted, this.clock.nowNs());
    this.ack(p, src, seen === undefined ? 'accepted' : seen === 'accepted' ? 'duplicate' : seen);
    return true;
  }

  /** The sender's sequence window a packet belongs to: one per machine and switch (rack-links.ts). */
  private streamOf(p: LockPacket): number {
    return seqStreamOf(p, this.options.racks ?? 1);
  }

  private watchdogView() {
    return {
      agent: (lid: LockId) => this.agentOf(lid),
      stopped: () => this.stopped || this.paused,
      orphanedLocalHolder: (_lid: LockId, a: AgentValue): string | undefined => {
        // only clients that keep records (RecoverableFissLockClient) can say a task is gone
        if (this.recoveryClients.size === 0) return undefined;
        const known = new Set([...this.recoveryClients].flatMap((c) => c.recoveryRecords()).map((r) => requestKey(r)));
        for (const h of a.holders) if (h.startsWith(`${this.machine}:`) && !known.has(h) && !this.listeners.has(Number(h.split(':')[1]))) return h;
        return undefined;
      },
    };
  }
}
