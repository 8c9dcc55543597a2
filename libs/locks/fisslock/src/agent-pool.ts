import type { Clock, LockId, LockMode, LockPacket, NodeId, SpanContextRef, SwitchPort, Trace } from '@lockfabric/ports';
import { createSequencedLink, seqStreamOf } from './rack-links.js';
import type { SequencedLink } from './rack-links.js';
import { BounceBackoff } from './pool/bounce-backoff.js';
import { holderKey } from './pool/agent.js';
import type { Agent, FissPolicy, Waiter } from './pool/agent.js';
import { startHandoverSpan } from './pool/handover-span.js';
import type { Releaser } from './pool/handover-span.js';
import { ReceiveDedup } from './pool/receive-dedup.js';
import { answeredBySwitchGrant } from './pool/request-copies.js';
import { StarvationNotifier } from './pool/starvation.js';
import { StuckReleases } from './pool/stuck-releases.js';
import { StuckWatchdog } from './pool/stuck-watchdog.js';
import type { StuckReport } from './pool/stuck-watchdog.js';
import { pendingOutlivesAbortRefusal } from './pool/abort-refusal.js';
import { TransferAssembly } from './pool/transfer-assembly.js';
import { LifetimeMarks } from './pool/lifetime-marks.js';
import { HomeParking } from './pool/home-parking.js';
import type { AgentPlacement } from './pool/home-parking.js';
import { FLAG_ABORT, FLAG_BOUNCED, FLAG_CUR_SHARED, FLAG_DUP, FLAG_GRANTABLE, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_INVALID, FLAG_REACHED, FLAG_VOID, FLAG_WW_NEXT, WAITER_COUNT_SHIFT, ackFlags, clientOfTask, ackStatusOf, grantHomeOf } from './wire.js';
import type { AckStatus } from './wire.js';
// recovery (S1/S2 hooks) types, used only by the section at the end of AgentPool
import type { RecoveryClientView } from './recovery/recovery-client.js';
import type { AgentRecord, MachineOrders, ServerReport } from './recovery/recovery-state.js';
import { requestKey } from './recovery/recovery-state.js';
import { GivenUpRequests } from './pool/given-up.js';
import { BouncedOrigins, LifetimeAnchors } from './pool/lifetime-anchors.js';

export type { Agent, FissPolicy, Waiter } from './pool/agent.js';
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
  /** Test-only mutant: stuck RELEASEs keep their wait when the lock's state changes here (shows the transfer-entries guard alone). */
  readonly mutantNoStuckRestart?: boolean;
  /** Test-only mutant: agents never tell the switch that a writer waits (no STARVE / ww notice). */
  readonly mutantNoStarve?: boolean;
  /** Test-only mutant: an abort may take the switch's timeout-free while another local ACQUIRE of the lock is undecided (the old rule; both-links seeds 8 and 2). */
  readonly mutantAbortBehindAcquire?: boolean;
  /** Test-only mutant: a new agent drops the machine's unacknowledged FREE / agent GRANTs of the lock from the link instead of voiding them (the old rule; both-links seed 2). */
  readonly mutantForgetOnInstall?: boolean;
  /** Test-only mutant: a re-ACK of a packet that bounced here takes the DUP bit of the new copy alone (the old rule). */
  readonly mutantReAckNewDup?: boolean;
  /** Test-only mutant: a refused timeout-free restores the machine's pending agent (the old rule; both-links seed 393). */
  readonly mutantRefusedAbortRestores?: boolean;
  /** `home`: FissLock-Local, agents park at their lock's home (pool/home-parking.ts); needs `placeAtHomes`. Default `migrate`. */
  readonly placement?: AgentPlacement;
  /** Test-only mutant of FissLock-Local: a parked agent grants a local request of the other mode without the decider. */
  readonly mutantParkedModeChange?: boolean;
  /** Test-only mutant: a ② copy arriving after its request's abort was dropped here becomes a holder, as before (pool/given-up.ts). */
  readonly mutantHoldGivenUp?: boolean;
  /** Test-only mutant: a GRANT taken silently for an aborted task stays held after its timeout-free is answered. */
  readonly mutantKeepSwallowedGrant?: boolean;
  /** Test-only mutant: a bounced copy deferred by the back-off is still sent after a recovery replaced the link. */
  readonly mutantResendAcrossRecovery?: boolean;
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

/**
 * A machine's FissLock runtime: the agent pool (spec §4.3) plus the receive path every client of
 * the machine shares — ACKs to the reliable link, GRANTs to the waiting task, lock requests and
 * refusals to the agents. One instance per machine; clients call the `tryLocal*` methods directly
 * (workflows ④–⑦ without the network) and send the rest through `link`. The bookkeeping lives in
 * src/pool: receive dedup, transfer assembly, bounce back-off, stuck releases, starvation notices.
 */
export class AgentPool {
  readonly agents = new Map<LockId, Agent>();
  readonly pending = new Map<LockId, Agent>();
  readonly link: SequencedLink;
  readonly listeners = new Map<number, TaskListener>();
  /**
   * Local tasks whose request an agent recorded (ACKed ACCEPTED), possibly only a copy bounced by
   * another machine: their abort must go to the agent (REACHED), never to the switch's
   * timeout-free, and they may have a transfer GRANT on its way (see mayReissueAbort).
   */
  readonly recordedTasks = new Set<number>();
  private readonly dedup = new ReceiveDedup();
  private readonly transfers = new TransferAssembly((p) => this.streamOf(p));
  private readonly backoff: BounceBackoff;
  private readonly stuck: StuckReleases;
  private readonly starvation: StarvationNotifier;
  /** T_STUCK watchdog (spec §12.9): stuck locks go to `onStuckLock` (the per-lock repair). */
  readonly watchdog: StuckWatchdog;
  onStuckLock: ((report: StuckReport) => void) | undefined;
  private stopped = false;
  /** Enders and held marks of this machine's packets, per lock (see timeoutFreeUnsafe). */
  private readonly marks = new LifetimeMarks();
  /** Requests whose abort was answered here before their ② copy came: never held (pool/given-up.ts). */
  private readonly givenUp = new GivenUpRequests();
  /** Per agent lifetime, which senders' packets are known to be decided within it (pool/lifetime-anchors.ts). */
  private readonly anchors = new LifetimeAnchors();
  /** Requesters' duplicate ACQUIREs this machine bounced: the seq of the copy the decider first saw. */
  private readonly bouncedOrigins = new BouncedOrigins();
  private readonly unsubscribe: () => void;
  /** FissLock-Local only (placement home): this machine's parked agents. */
  private parking: HomeParking | undefined;
  counters = { bounced: 0, duplicates: 0, installs: 0, localGrants: 0, refusals: 0, reissuedAborts: 0, writtenOff: 0, staleReleases: 0, droppedAborts: 0, voidedOnInstall: 0, reissueDeferred: 0, abortsBehindAcquire: 0, queuedThenGranted: 0, grantedTwice: 0, orphanedCopies: 0, stuckLocks: 0, parks: 0, parkedGrants: 0, lateCopiesReleased: 0, swallowedReleased: 0, staleBounces: 0, dupGrantsCounted: 0 };

  constructor(
    readonly machine: NodeId,
    private readonly port: SwitchPort,
    private readonly clock: Clock,
    readonly options: AgentPoolOptions,
  ) {
    this.link = createSequencedLink(machine, port, clock, options);
    this.backoff = new BounceBackoff(options.bounceBackoffNs ?? 0, options.rtoNs);
    this.stuck = new StuckReleases(options.stuckAfterNs ?? 10 * options.rtoNs);
    this.starvation = new StarvationNotifier(options.policy, options.starvePeriodNs, clock, () => this.link, (lid, a) => this.agents.get(lid) === a, machine, options.mutantNoStarve === true);
    // never shorter than the stuck-RELEASE wait (10 RTO): a slow link (live RTO 250 ms) is not a stuck lock
    const tStuckNs = options.tStuckNs ? Math.max(options.tStuckNs, options.stuckAfterNs ?? 10 * options.rtoNs) : 0;
    this.watchdog = new StuckWatchdog(tStuckNs, clock, this.watchdogView(), (r) => {
      this.counters.stuckLocks++;
      this.onStuckLock?.(r);
    });
    this.link.intercept = (p) => this.interceptQuarantined(p);
    this.unsubscribe = port.onPacket((packet) => this.receive(packet));
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
    this.parking = new HomeParking(this.machine, computeNodes, this.options.mutantParkedModeChange === true);
  }

  // ---- local paths (④–⑦), called by clients of this machine ----

  tryLocalAcquire(lid: LockId, task: number, mode: LockMode): 'granted' | 'queued' | 'no-agent' {
    const a = this.agents.get(lid);
    if (!a) return 'no-agent';
    if (this.parking?.isParked(lid, a)) {
      this.parking.unpark(lid);
      if (this.parking.localRequest(a, mode) === 'free-first') {
        // a mode change goes through the decider (Lemma 1): FREE the parked agent, then ACQUIRE
        // on the same FIFO link, so the decider frees the lock before it decides the request
        this.handOn(lid, a, undefined, false);
        return 'no-agent';
      }
      a.holders.add(key(this.machine, task));
      this.counters.localGrants++;
      this.counters.parkedGrants++;
      return 'granted';
    }
    if (mode === 'shared' && a.mode === 'shared' && !this.blocksReaders(a)) {
      a.holders.add(key(this.machine, task)); // ④
      this.counters.localGrants++;
      return 'granted';
    }
    a.wqueue.push({ mid: this.machine, task, mode }); // ⑤
    this.watchdog.noteWaiter(lid, a);
    if (mode === 'exclusive') this.starvation.writerQueuedLocally(lid, a);
    else this.maybeStarve(lid, a);
    return 'queued';
  }

  /** Removes a locally queued waiter that gave up; false if it is not queued here. */
  abortLocal(lid: LockId, task: number): boolean {
    const a = this.agents.get(lid);
    if (!a) return false;
    const at = a.wqueue.findIndex((w) => w.mid === this.machine && w.task === task);
    if (at < 0) return false;
    a.wqueue.splice(at, 1);
    return true;
  }

  /**
   * Whether this machine has, or may be about to receive, an agent for `lid` that is not `task`'s
   * own lost ① grant: a live or pending agent, a transfer waiting for its entries, or another local
   * task still expecting a GRANT for the lock. The switch's timeout-free rule (§5.2) frees a lock
   * whose agent machine sends an unreached abort, so such an abort must go to the agent instead.
   */
  otherInterest(lid: LockId, task: number): boolean {
    if (this.agents.has(lid) || this.pending.has(lid) || this.transfers.hasGrantFor(lid)) return true;
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
    if (this.options.mutantAbortBehindAcquire === true) return false;
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

  /** `switchShared`: the hold is a ② grant (see releaseCore). */
  tryLocalRelease(lid: LockId, task: number, acquireSpan?: SpanContextRef, switchShared = false): 'done' | 'no-agent' | 'not-found' {
    const a = this.agents.get(lid);
    if (!a) return 'no-agent';
    return this.releaseCore(lid, a, this.machine, task, { from: `${this.machine}/${clientOfTask(task)}`, acquire: acquireSpan }, switchShared) ? 'done' : 'not-found';
  }

  // ---- receive path ----

  private receive(p: LockPacket): void {
    if (p.lock >= (this.options.switchCapacity ?? Infinity)) return; // a fallback manager's packet (§6.6)
    if (this.quarantined.size > 0 && this.quarantined.has(p.lock) && this.absorbQuarantined(p)) return;
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
        this.counters.duplicates++;
        return;
      }
      return this.onRefused(p, resent);
    }
    if (p.type === 'grant' && p.agent === undefined) {
      // ①/② GRANTs come from the switch unsequenced: the one request id a GRANT names is the dedup key
      if (this.dedup.isSwitchGrantDuplicate(p, this.clock.nowNs())) {
        this.counters.duplicates++;
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
      this.counters.duplicates++;
      // A re-ACK stands in for the first ACK, which may have been lost. For BOUNCED its DUP bit is
      // what tells the requester whether the request is on its way to be decided (§5.2 REACHED):
      // a non-DUP copy that bounced here travels on as this machine's packet and the switch decides
      // it again, whatever copy comes next. So DUP only if the bounced copy and this one both carry
      // it (a non-DUP copy reaching a server was itself decided ③ by the switch: no lost ① grant).
      // Taking this copy's DUP bit alone told a requester whose first ACK was lost that its request
      // might be a lost ① grant, so its abort went unREACHED and could take the switch's
      // timeout-free (tests/reack-bounced-duplicate.test.ts; mutant `mutantReAckNewDup`).
      const dup = seen.status === 'bounced' && this.options.mutantReAckNewDup !== true ? seen.dup && (p.flags & FLAG_DUP) !== 0 : (p.flags & FLAG_DUP) !== 0;
      this.ack(p, src, seen.status === 'accepted' ? 'duplicate' : seen.status, dup);
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

  private onAcquire(p: LockPacket): AckStatus {
    // a ② copy this pool already wrote off as lost (see onRelease) arrived after all: count nothing
    if ((p.flags & FLAG_GRANTED) !== 0 && this.stuck.takeWrittenOff(p)) return 'duplicate';
    if (this.isOrphanedCopy(p)) {
      this.counters.orphanedCopies++;
      return 'duplicate';
    }
    const a = this.agents.get(p.lock);
    if (!a) return this.bounce(p);
    const k = key(p.machine, p.task);
    const queuedAt = a.wqueue.findIndex((w) => key(w.mid, w.task) === k);
    if ((p.flags & FLAG_GRANTED) !== 0 && queuedAt >= 0) {
      // a DUP copy of this ACQUIRE got here first and queued it: the decider granted it (②)
      a.wqueue.splice(queuedAt, 1);
      this.counters.queuedThenGranted++;
    } else if ((p.flags & FLAG_GRANTED) !== 0 && a.holders.has(k)) {
      // Granted twice: a bounced (non-DUP) copy was decided again (§12.4) while another copy of
      // the request was queued and granted here as a shared follower. The decider counted this
      // one, so the agent counts it too, or its FREE/transfer is refused for ever (the client
      // keeps one grant and releases the other as a stray). Found with a short RTO, no faults.
      a.inca = (a.inca + 1) & 0xff;
      this.counters.grantedTwice++;
      return 'duplicate';
    } else if (a.holders.has(k) || queuedAt >= 0) return 'duplicate';
    const dupGranted = this.isGrantedDuplicate(p, a);
    if (dupGranted) {
      // its ② copy, should it come after all, counts nothing (the pool's written-off record)
      this.stuck.writeOff(p);
      this.counters.dupGrantsCounted++;
    }
    if ((p.flags & FLAG_GRANTED) !== 0 || dupGranted) {
      a.holders.add(k); // ② the decider already granted: count it
      a.inca = (a.inca + 1) & 0xff;
      // the decider made this copy while naming this agent: the sender's later packets are of this lifetime too
      if ((p.flags & (FLAG_DUP | FLAG_BOUNCED)) === 0 && (p.agent ?? p.machine) === p.machine) this.anchors.decided(a, p.machine, p.seq);
      if (this.givenUp.has(p.lock, p.machine, p.task)) {
        // its abort came first and was answered: count the grant, release the holder (pool/given-up.ts)
        this.counters.lateCopiesReleased++;
        this.releaseCore(p.lock, a, p.machine, p.task, { from: `${p.machine}/${clientOfTask(p.task)}` }, true);
        return 'accepted';
      }
      if (p.machine === this.machine) this.watchdog.noteLocalHolder(p.lock, k);
    } else if (this.parking?.isParked(p.lock, a)) {
      // ③ on a parked agent (FissLock-Local): no holder will ever hand it on, so hand it on now
      this.parking.unpark(p.lock);
      a.wqueue.push({ mid: p.machine, task: p.task, mode: p.mode });
      this.handOn(p.lock, a);
    } else {
      a.wqueue.push({ mid: p.machine, task: p.task, mode: p.mode }); // ③
      this.watchdog.noteWaiter(p.lock, a);
      this.maybeStarve(p.lock, a);
    }
    // A DUP copy bounced by another machine: the requester's own ACK said "bounced, DUP" (not
    // REACHED) and this ACK goes to the bouncer, so the requester would abort unREACHED and the
    // switch's timeout-free could free the lock while a transfer GRANT to it is on its way (wide
    // sweep, 2% faults, seed 55). Tell the requester's machine (best effort: an ACK naming no seq).
    const src = p.agent ?? p.machine;
    if ((p.flags & FLAG_DUP) === 0 || src === p.machine) return 'accepted';
    if (p.machine !== this.machine) {
      this.port.send({ type: 'ack', lock: p.lock, machine: this.machine, task: p.task, mode: p.mode, incarnation: 0, seq: 0, flags: ackFlags('accepted') | FLAG_REACHED, dst: p.machine });
    } else this.recordedTasks.add(p.task);
    return 'accepted';
  }

  /**
   * A duplicate ACQUIRE whose first copy the decider granted ② (FissLock §4.2: a duplicate is
   * processed without updating metadata, so the decision it reads again is the one made). The
   * decider only routes a DUP copy, but marks it GRANTABLE when held shared, no reader block and
   * under the incarnation bound; none of these turns from false to true within one lifetime. So
   * if the first copy was decided within this agent's lifetime (LifetimeAnchors), it was a ②
   * grant the decider counted. When its GRANT and ② copy were both lost (swarm lossy seeds 24,
   * 48), only this copy tells the agent: queued as a waiter, as before, its count was missing for
   * ever and every FREE / transfer of the lock was refused. It is counted as the ② copy instead;
   * the requester either got the GRANT after all and releases it, or aborts, and its abort removes
   * it from the holders (§4.2 ②). The requester's seq is needed: a copy bounced by this machine
   * carries this machine's, so the bounce remembered the requester's (BouncedOrigins).
   */
  private isGrantedDuplicate(p: LockPacket, a: Agent): boolean {
    if (this.options.mutantDupNeverGranted === true) return false;
    if ((p.flags & (FLAG_DUP | FLAG_GRANTABLE | FLAG_GRANTED)) !== (FLAG_DUP | FLAG_GRANTABLE)) return false;
    if (p.mode !== 'shared' || a.mode !== 'shared') return false;
    const seq = this.requesterSeqOf(p);
    return seq !== undefined && this.anchors.decidedWithin(a, p.machine, seq);
  }

  /** The seq of a duplicate ACQUIRE as its requester numbered it, when known. */
  private requesterSeqOf(p: LockPacket): number | undefined {
    const src = p.agent ?? p.machine;
    if ((p.flags & FLAG_BOUNCED) === 0) return src === p.machine ? p.seq : undefined;
    return src === this.machine ? this.bouncedOrigins.seqOf(p.lock, p.machine, p.task) : undefined;
  }

  /**
   * A ② copy reaching an exclusive agent: a ② grant needs the lock held shared at the agent's
   * machine, and that shared lifetime cannot end (accepted FREE / transfer) before the agent has
   * counted the copy — unless its home wrote the copy off as lost (writeOffLostCopy) while it was
   * still circling. Counted by a later exclusive agent it made a shared holder nobody releases (and
   * an inca ahead of the decider's): the lock never freed (wide sweep, 2% seeds 16, 24; 10% seed
   * 27). A written-off copy reaching a later *shared* agent cannot be told from a fresh one (the
   * decider's ② copy of a bounced ③ ACQUIRE also carries BOUNCED and the bouncer as src): that
   * needs the copy to name its home, as the ② GRANT does.
   */
  private isOrphanedCopy(p: LockPacket): boolean {
    return (p.flags & FLAG_GRANTED) !== 0 && this.agents.get(p.lock)?.mode === 'exclusive';
  }

  private onRelease(p: LockPacket): AckStatus {
    const a = this.agents.get(p.lock);
    if (a && this.releaseCore(p.lock, a, p.machine, p.task, { from: `${p.machine}/${clientOfTask(p.task)}`, acquire: p.trace }, (p.flags & FLAG_GRANTED) !== 0)) {
      this.stuck.resolved(p);
      return 'accepted';
    }
    if (this.recordedElsewhere(p)) {
      this.counters.staleReleases++;
      this.stuck.resolved(p);
      return 'duplicate';
    }
    if (this.stuck.longEnough(p, this.clock.nowNs())) {
      if (!a && this.mayReissueAbort(p)) return this.reissueAbort(p);
      if (a && (p.flags & FLAG_GRANTED) !== 0) return this.writeOffLostCopy(p, a);
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
        this.counters.droppedAborts++;
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
    if (p.machine !== this.machine || (p.flags & FLAG_ABORT) === 0 || this.pending.has(p.lock) || this.transfers.hasGrantFor(p.lock)) return false;
    // Nor while entries of a transfer of the lock to this machine arrived lately without their
    // GRANT: the decider accepted it and its first copy was lost (the sender resends it every RTO),
    // and the grantee may be recorded out of this machine's sight — the ACK of its bounced copy
    // lost (wide sweep, 10% faults, seeds 37 and 109). Entries of a refused transfer age out.
    if (this.transfers.hasEntriesFor(p.lock, this.clock.nowNs() - this.stuck.afterNs)) {
      this.counters.reissueDeferred++;
      return false;
    }
    for (const [t, listener] of this.listeners) if (t !== p.task && listener.lock === p.lock && this.recordedTasks.has(t)) return false;
    // Nor while another local ACQUIRE of the lock, or another timeout-free, is undecided: its
    // lifetime would be the one the timeout-free ends (see timeoutFreeUnsafe). The abort keeps
    // circling; once the packet is answered, an agent arrived here takes the abort itself.
    if (this.timeoutFreeUnsafe(p.lock, p.task)) {
      this.counters.abortsBehindAcquire++;
      return false;
    }
    return true;
  }

  private reissueAbort(p: LockPacket): AckStatus {
    this.counters.reissuedAborts++;
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
  private writeOffLostCopy(p: LockPacket, a: Agent): AckStatus {
    this.counters.writtenOff++;
    this.stuck.writeOff(p);
    a.inca = (a.inca + 1) & 0xff;
    // a DUP copy of the lost ② copy's ACQUIRE may have queued the holder as a waiter
    a.wqueue = a.wqueue.filter((w) => w.mid !== p.machine || w.task !== p.task);
    if (a.holders.size === 0) this.handOn(p.lock, a);
    return 'accepted';
  }

  /**
   * Removes a holder (or an aborted waiter); hands the lock on when the last holder leaves. The
   * release of a ② grant (`switchShared`) never matches a waiter: the waiter is a DUP copy of the
   * same ACQUIRE that got here before the decider's ② copy (see receive); removing it would leave
   * that copy to add a holder nobody releases. It waits for the copy (bounce) like any ② RELEASE.
   */
  private releaseCore(lid: LockId, a: Agent, mid: NodeId, task: number, releaser?: Releaser, switchShared = false): boolean {
    const k = key(mid, task);
    if (!a.holders.delete(k)) {
      if (switchShared) return false;
      const at = a.wqueue.findIndex((w) => key(w.mid, w.task) === k);
      if (at < 0) return false; // the RELEASE overtook its ACQUIRE (§5.3): bounce
      a.wqueue.splice(at, 1);
      return true;
    }
    if (a.holders.size > 0) return true; // ⑥
    this.handOn(lid, a, releaser);
    return true;
  }

  /** `mayPark`: false when a parked agent is freed for a mode change (FissLock-Local). */
  private handOn(lid: LockId, a: Agent, releaser?: Releaser, mayPark = true): void {
    if (mayPark && this.parking?.parks(lid, a) && this.agents.get(lid) === a) {
      // FissLock-Local: the last holder at the lock's home left and nobody waits: park, no FREE
      this.parking.park(lid);
      this.starvation.stop(lid);
      this.watchdog.clear(lid);
      this.counters.parks++;
      return;
    }
    this.parking?.unpark(lid);
    this.agents.delete(lid);
    this.pending.set(lid, a);
    this.starvation.stop(lid);
    const next = a.wqueue[0];
    if (!next) {
      // ⑦
      const seq = this.link.send({ type: 'free', lock: lid, machine: this.machine, task: 0, mode: a.mode, incarnation: a.inca, flags: 0 }, (ack) => {
        if (ackStatusOf(ack.flags) === 'freed' && this.pending.get(lid) === a) {
          this.pending.delete(lid);
          this.watchdog.clear(lid);
        }
      });
      this.marks.ender(lid, seq);
      return;
    }
    // ⑧: the rest of the queue travels as transfer entries sequenced just before the GRANT
    const rest = a.wqueue.slice(1);
    rest.forEach((w, i) => this.link.send({ type: 'transfer', lock: lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: i, flags: 0, dst: next.mid }));
    const flags =
      FLAG_HAS_AGENT |
      (a.mode === 'shared' ? FLAG_CUR_SHARED : 0) |
      (rest.some((w) => w.mode === 'exclusive') ? FLAG_WW_NEXT : 0) |
      (rest.length << WAITER_COUNT_SHIFT);
    const span = startHandoverSpan(this.options.trace, this.machine, lid, next, releaser);
    const seq = this.link.send({ type: 'grant', lock: lid, machine: next.mid, task: next.task, mode: next.mode, incarnation: a.inca, flags, ...(span ? { trace: span } : {}) }, (ack) => {
      if (ack.type === 'ack' && this.pending.get(lid) === a) this.pending.delete(lid);
    });
    this.marks.ender(lid, seq);
  }

  /** ① the switch granted a free lock: the GRANT carries an empty agent. */
  private onSwitchGrant(p: LockPacket, decidedSeq?: number): void {
    const listener = this.listeners.get(p.task);
    if (listener === undefined && this.discardStale(p)) return;
    this.install(p, [], decidedSeq);
  }

  /** A stale ① GRANT for a request whose abort-release already freed the lock installs nothing. */
  discardedTasks = new Set<number>();

  /** Records how this machine's abort-RELEASE of `task` was answered (client and reissued aborts). */
  abortAnswered(task: number, ack: LockPacket): void {
    if (ack.type === 'ack' && ackStatusOf(ack.flags) === 'freed') {
      this.discardedTasks.add(task);
      // A late GRANT of this task taken silently while the abort was out (spec §5.2: "the abort
      // will release it"): this abort was a timeout-free and released nothing here, so the hold
      // stays with nobody to release it (swarm lossy seed 242: a DUP copy queued at the next local
      // agent, handed the lock by self-transfer). Release it now.
      if (this.options.mutantKeepSwallowedGrant !== true && this.agents.get(ack.lock)?.holders.has(key(this.machine, task))) {
        this.counters.swallowedReleased++;
        this.tryLocalRelease(ack.lock, task);
      }
      // other aborts of the lock circling here must not reissue at once: a bounced copy may be
      // decided again as ① to this machine, its GRANT still on the way (wide sweep, 10%, seed 364)
      if (!this.options.mutantNoStuckRestart) this.stuck.restart(ack.lock);
    }
  }

  private noteGivenUp(lid: LockId, mid: NodeId, task: number): void {
    if (this.options.mutantHoldGivenUp !== true) this.givenUp.note(lid, mid, task);
  }

  private discardStale(p: LockPacket): boolean {
    return this.discardedTasks.has(p.task);
  }

  private completeTransfers(): void {
    for (const { grant, queue } of this.transfers.takeComplete()) this.install(grant, queue);
  }

  /** Installs an agent carried by a GRANT (① or ⑧) and grants the leading run of shared waiters with it. */
  /** `decidedSeq`: for a ① GRANT, this machine's ACQUIRE copy the decider granted (the lifetime began there). */
  private install(g: LockPacket, queue: Waiter[], decidedSeq?: number): void {
    this.counters.installs++;
    const a: Agent = { mode: g.mode, inca: 0, holders: new Set([key(g.machine, g.task)]), wqueue: queue };
    // The lifetime began when the decider took this machine's ① ACQUIRE or own transfer GRANT (a
    // self-transfer), if it was one: what this machine sent after it is of the new lifetime. Else
    // (a transfer from elsewhere) only what it sends from now on is known to be.
    const self = g.agent === this.machine && g.seq > 0 ? g.seq : decidedSeq;
    this.anchors.start(a, this.machine, self ?? this.link.lastSeq(g.lock));
    // A FREE / transfer GRANT of an earlier agent of the lock that this machine still resends is
    // void now: resent, it would be decided against the lock's *new* state — refused (§13.1
    // re-refusal) and restore the old agent next to this one (seed 52), or, if the switch never saw
    // it, accepted (an exclusive FREE has no incarnation check) and free the new lifetime. Usually
    // the switch accepted it and only the ACK was lost, but not always: the earlier lifetime may
    // have ended otherwise while the packet waited behind an ingress gap (both-links seed 2). So
    // it is not dropped from the link — its seq would stay a hole the switch waits for, dropping
    // every later packet of this machine as a gap — but voided: the same seq now carries a filler
    // the switch only routes back here (FLAG_VOID), and the entry ends with its ACK.
    const old = (q: LockPacket): boolean => q.lock === g.lock && (q.type === 'free' || (q.type === 'grant' && (q.flags & FLAG_HAS_AGENT) !== 0));
    if (this.options.mutantForgetOnInstall === true) this.counters.voidedOnInstall += this.link.forget(old);
    else this.counters.voidedOnInstall += this.link.voidOutstanding(old, (q) => ({ type: 'transfer', lock: q.lock, machine: this.machine, task: 0, mode: q.mode, incarnation: 0, flags: FLAG_VOID, dst: this.machine }));
    this.pending.delete(g.lock);
    this.backoff.forget(g.lock);
    this.watchdog.clear(g.lock);
    if (!this.options.mutantNoStuckRestart) this.stuck.restart(g.lock);
    this.agents.set(g.lock, a);
    if (a.mode === 'shared') {
      while (a.wqueue[0]?.mode === 'shared') {
        const w = a.wqueue.shift() as Waiter;
        a.holders.add(key(w.mid, w.task));
        this.link.send({ type: 'grant', lock: g.lock, machine: w.mid, task: w.task, mode: 'shared', incarnation: 0, flags: 0, ...(g.trace ? { trace: g.trace } : {}) });
      }
    }
    this.maybeStarve(g.lock, a);
    this.deliver(g);
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

  /** FREE or transfer GRANT refused (or a timeout-free refused): restore the agent and wait for the delayed ② copies. */
  /** `resent`: the refused packet went out more than once, so the refusal may answer an earlier copy. */
  private onRefused(p: LockPacket, resent: boolean): void {
    this.counters.refusals++;
    if (this.agents.has(p.lock)) return; // never overwrite a live agent (§13.2)
    // A refused timeout-free (§5.2) asks for an empty agent here; a pending one is an agent already,
    // handed on by a FREE / transfer the decider has not answered yet: that packet's own answer
    // decides it (see pendingOutlivesAbortRefusal; both-links seeds 370, 378, 393, 500)
    if (this.options.mutantRefusedAbortRestores !== true && pendingOutlivesAbortRefusal(p, this.pending.has(p.lock))) return;
    const a = this.pending.get(p.lock) ?? { mode: p.mode, inca: 0, holders: new Set<string>(), wqueue: [] };
    this.pending.delete(p.lock);
    if (p.type === 'grant') {
      // handOn leaves the grantee at the head of the pending agent's queue (it never pops), so the
      // refused grantee goes back only into an agent rebuilt from the packet; a second copy of it
      // would later be granted twice — with a shared transfer, as a follower whose stray release
      // empties the holders under a holder (wide sweep, 10% faults, seed 89)
      const head = a.wqueue[0];
      if (head?.mid !== p.machine || head.task !== p.task) a.wqueue.unshift({ mid: p.machine, task: p.task, mode: p.mode });
      a.mode = (p.flags & FLAG_CUR_SHARED) !== 0 ? 'shared' : 'exclusive';
    } else if ((p.flags & FLAG_ABORT) !== 0 && p.type === 'free') {
      a.mode = p.mode; // built empty after a refused timeout-free
    }
    a.holders.clear();
    a.inca = p.type === 'free' && (p.flags & FLAG_ABORT) !== 0 ? 0 : p.incarnation & 0xff;
    this.agents.set(p.lock, a);
    // Refused when first sent: decided within the lifetime this agent now carries on (or, after a
    // refused timeout-free, builds anew), so this machine's later packets are of it too. A resent
    // packet is refused again whenever the decider's inca is ahead of its own, which a later
    // lifetime here can also show if an earlier copy was accepted (README "Known latent gap"): then
    // this agent is stale. Wide seed 455: FREE 933 accepted, its ACK lost; ACQUIRE 934 got the free
    // lock (①), its GRANT lost; the resent FREE was refused again, the old agent restored, and 934's
    // duplicate was counted as its ② grant. So after such a refusal the anchors stay only when no
    // new lifetime can have begun here since (mayHaveMovedOn).
    if (!resent) this.anchors.decided(a, this.machine, p.seq);
    else if (this.options.mutantTrustReRefusal !== true && this.mayHaveMovedOn(p)) this.anchors.forget(a);
    this.watchdog.noteRefused(p.lock);
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
    this.counters.bounced++;
    this.watchdog.noteBounce(p.lock);
    const { seq: _seq, agent: _agent, ...rest } = p;
    const packet = { ...rest, flags: p.flags | FLAG_BOUNCED };
    if (p.type === 'acquire' && (p.flags & (FLAG_DUP | FLAG_BOUNCED | FLAG_GRANTED)) === FLAG_DUP && (p.agent ?? p.machine) === p.machine) {
      this.bouncedOrigins.note(p.lock, p.machine, p.task, p.seq); // see isGrantedDuplicate
    }
    // a bounced copy of this machine's own ACQUIRE: its requester only saw the first hop's ACK,
    // so whether an agent recorded it is learned here (see mayReissueAbort)
    const onAck = p.type === 'acquire' && p.machine === this.machine ? (ack: LockPacket) => this.noteRecorded(p.task, ack) : undefined;
    const delayNs = this.backoff.delayNs(p.lock, this.clock.nowNs());
    if (delayNs === 0) this.link.send(packet, onAck);
    else {
      // A recovery (S1–S3) in between replaces the link: S1 took every live request from its
      // client and S2 queued or aborted it, so a copy deferred on the old link is stale, and one
      // of a failed machine would put the dead task back in a queue (swarm lossy seed 268).
      const bouncedOn = this.link;
      void this.clock.sleep(delayNs).then(() => {
        if (this.stopped) return;
        if (this.link !== bouncedOn && this.options.mutantResendAcrossRecovery !== true) return void this.counters.staleBounces++;
        this.link.send(packet, onAck);
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

  private blocksReaders(a: Agent): boolean {
    if (this.options.policy === 'read-preferring') return false;
    return a.wqueue.some((w) => w.mode === 'exclusive');
  }

  /** Starvation prevention (§4.6): a writer queued behind shared holders starts the STARVE notices. */
  private maybeStarve(lid: LockId, a: Agent): void {
    this.starvation.maybeStart(lid, a);
  }

  // ---- recovery (S1/S2 hooks) ----
  // Owned by the recovery work (src/recovery); spec §7.2.

  /** Clients of this machine that can say what they hold and wait for (spec §2.3), for S1. */
  readonly recoveryClients = new Set<RecoveryClientView>();
  /** True between S1 (pause) and the end of S2 on this machine. */
  recoveryPaused = false;
  /** Packets dropped because they were sent while paused (S2's state supersedes them). */
  recoveryDiscarded = 0;

  /**
   * S1, first half: no lock operation of this machine reaches the network any more. The link's
   * retransmission buffer is dropped (spec S0) and every packet sent from now on is discarded;
   * packets still arriving are processed, so the report taken after the drain includes them.
   */
  pauseForRecovery(): void {
    this.recoveryPaused = true;
    this.swapLink({ machine: this.machine, send: () => void this.recoveryDiscarded++, onPacket: () => () => undefined });
  }

  /** S1, second half: this machine's agents (live and pending) and its clients' requests. */
  recoveryReport(): ServerReport {
    const record = (lid: LockId, a: Agent, state: 'live' | 'pending'): AgentRecord => ({
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
    const agents = [...[...this.agents].map(([lid, a]) => record(lid, a, 'live')), ...[...this.pending].map(([lid, a]) => record(lid, a, 'pending'))];
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
    this.agents.clear();
    this.pending.clear();
    this.parking?.clear(); // S2 frees a lock with neither holders nor waiters: nothing stays parked
    this.dedup.clearSequenced();
    this.transfers.clear();
    this.starvation.clear();
    this.discardedTasks.clear();
    this.recordedTasks.clear();
    this.marks.clear();
    for (const r of orders.agents) {
      const a: Agent = { mode: r.mode, inca: 0, holders: new Set(r.holders.map((h) => key(h.mid, h.task))), wqueue: r.wqueue.map((w) => ({ mid: w.mid, task: w.task, mode: w.mode })) };
      this.agents.set(r.lid, a);
      this.maybeStarve(r.lid, a);
    }
    for (const order of orders.abort) {
      this.listeners.delete(order.task);
      for (const c of this.recoveryClients) c.recoveryAbort(order.lid, order.task, order.reason);
    }
    this.recoveryPaused = false;
    for (const w of orders.wake) {
      const grant: LockPacket = { type: 'grant', lock: w.lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: 0, seq: 0, flags: 0 };
      this.listeners.get(w.task)?.granted(grant);
    }
  }

  /** This machine has failed (sim and tests): nothing it does reaches the network again, nothing reaches it. */
  failStop(): void {
    this.stop();
    this.recoveryPaused = true;
    this.swapLink({ machine: this.machine, send: () => void this.recoveryDiscarded++, onPacket: () => () => undefined });
  }

  private swapLink(port: SwitchPort): void {
    this.link.stop();
    // `link` is readonly for clients; recovery is the one place that replaces it (new sequence space)
    (this as unknown as { link: SequencedLink }).link = createSequencedLink(this.machine, port, this.clock, this.options);
    this.link.intercept = (p) => this.interceptQuarantined(p);
  }

  // ---- per-lock repair (spec §12.9: T_STUCK watchdog, S1–S3 for one lock) ----
  // Driven by recovery/lock-repair.ts; the reasoning is in recovery/README.md.

  /** Locks under a per-lock repair on this machine, with the last time one of their packets arrived. */
  private readonly quarantined = new Map<LockId, number>();

  /**
   * A per-lock repair begins: from now until `applyLockRepair`, nothing of `lid` leaves this
   * machine (sends are answered locally as accepted, FREEs as freed) and every arriving packet of
   * it is acknowledged and dropped, so the lock's packets in flight die out while every other lock
   * goes on. Local state of the lock may still change (a local grant or release): S1 reads it at the end.
   */
  quarantineLock(lid: LockId): void {
    this.quarantined.set(lid, this.clock.nowNs());
    this.starvation.stop(lid);
  }

  /** What the repair's drain waits for: this machine's unacknowledged packets of `lid`, and when the last one of it arrived. */
  quarantineState(lid: LockId): { readonly unacked: number; readonly lastArrivalNs: number } {
    return { unacked: this.link.outstandingPackets().filter((q) => q.lock === lid).length, lastArrivalNs: this.quarantined.get(lid) ?? 0 };
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
    this.parking?.unpark(lid);
    this.agents.delete(lid);
    this.pending.delete(lid);
    this.transfers.forgetLock(lid);
    this.starvation.stop(lid);
    this.backoff.forget(lid);
    this.stuck.restart(lid);
    this.watchdog.clear(lid);
    for (const r of orders.agents) {
      if (r.lid !== lid) continue;
      const a: Agent = { mode: r.mode, inca: 0, holders: new Set(r.holders.map((h) => key(h.mid, h.task))), wqueue: r.wqueue.map((w) => ({ mid: w.mid, task: w.task, mode: w.mode })) };
      this.agents.set(lid, a);
      this.maybeStarve(lid, a);
    }
    // S2 aborts only requests their clients gave up (no machine failed): nobody waits to be failed
    for (const order of orders.abort) if (order.lid === lid) this.listeners.delete(order.task);
    this.quarantined.delete(lid);
    for (const w of orders.wake) {
      if (w.lid !== lid) continue;
      const grant: LockPacket = { type: 'grant', lock: w.lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: 0, seq: 0, flags: 0 };
      this.listeners.get(w.task)?.granted(grant);
    }
  }

  /** The link's answer to a send of a quarantined lock (see quarantineLock): accepted, or freed for a FREE. */
  private interceptQuarantined(p: Omit<LockPacket, 'seq' | 'agent'>): LockPacket | undefined {
    if (this.quarantined.size === 0 || !this.quarantined.has(p.lock)) return undefined;
    return { ...p, type: 'ack', seq: 0, flags: ackFlags(p.type === 'free' ? 'freed' : 'accepted'), dst: this.machine };
  }

  /** An arriving packet of a quarantined lock: ACKs go on as usual (false); anything else is acknowledged and dropped. */
  private absorbQuarantined(p: LockPacket): boolean {
    this.quarantined.set(p.lock, this.clock.nowNs());
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
      agent: (lid: LockId) => this.agents.get(lid),
      stopped: () => this.stopped || this.recoveryPaused,
      orphanedLocalHolder: (_lid: LockId, a: Agent): string | undefined => {
        // only clients that keep records (RecoverableFissLockClient) can say a task is gone
        if (this.recoveryClients.size === 0) return undefined;
        const known = new Set([...this.recoveryClients].flatMap((c) => c.recoveryRecords()).map((r) => requestKey(r)));
        for (const h of a.holders) if (h.startsWith(`${this.machine}:`) && !known.has(h) && !this.listeners.has(Number(h.split(':')[1]))) return h;
        return undefined;
      },
    };
  }
}

