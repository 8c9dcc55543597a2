import type { LockId, LockPacket, NodeId } from '@lockfabric/ports';
import { deferredBounceLink } from './bounce-backoff.js';
import type { Waiter } from './agent.js';
import { reAckDup } from './receive-dedup.js';
import { answeredBySwitchGrant } from './request-copies.js';
import type { PoolInternals } from './pool-internals.js';
import { FLAG_ABORT, FLAG_BOUNCED, FLAG_DUP, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_INVALID, FLAG_REACHED, FLAG_VOID, ackFlags, ackStatusOf, grantHomeOf } from '../wire.js';
import type { AckStatus } from '../wire.js';

/**
 * A machine's receive path (spec §4.3, §5.2): every packet that reaches the agent pool. ACKs go to
 * the reliable link, ①/② GRANTs to the waiting task (or install an agent), refusals restore the
 * agent, and sequenced packets from other servers pass the receive dedup, reach the lock's agent
 * (through the pool's `step`) and are acknowledged; what no agent here takes is bounced on. It
 * holds no state of its own: it works on the pool's components (PoolInternals).
 */
export class ReceivePath {
  constructor(private readonly pool: PoolInternals) {}

  receive(p: LockPacket): void {
    if (p.lock >= (this.pool.options.switchCapacity ?? Infinity)) return; // a fallback manager's packet (§6.6)
    if (this.pool.quarantined.active && this.pool.quarantined.has(p.lock) && this.pool.absorbQuarantined(p)) return;
    if (p.type === 'ack') {
      if (p.dst !== this.pool.machine) return;
      if ((p.flags & FLAG_REACHED) !== 0) this.pool.recordedTasks.add(p.task); // an agent recorded a bounced copy of a local request
      else this.pool.link.acknowledge(p.seq, p);
      return;
    }
    const refusal = (p.flags & FLAG_INVALID) !== 0;
    if (refusal) {
      // a refusal answers one of this machine's FREE/GRANT/abort-RELEASE packets: a second copy
      // (duplicated on the wire, or a stale one after the agent moved on) must not restore anything
      const resent = p.agent === this.pool.machine && this.pool.link.resent(p.lock, p.seq);
      if (p.agent !== this.pool.machine || !this.pool.link.acknowledge(p.seq, p)) {
        this.pool.count.duplicates++;
        return;
      }
      return this.onRefused(p, resent);
    }
    if (p.type === 'grant' && p.agent === undefined) {
      // ①/② GRANTs come from the switch unsequenced: the one request id a GRANT names is the dedup key
      if (this.pool.dedup.isSwitchGrantDuplicate(p, this.pool.clock.nowNs())) {
        this.pool.count.duplicates++;
        return;
      }
      // the GRANT is the ACK of every copy of the request this machine still resends (pool/request-copies.ts)
      const answered = answeredBySwitchGrant(this.pool.machine, p);
      let decidedSeq: number | undefined; // the copy the decider granted is one of these (the latest is a safe anchor)
      for (const q of this.pool.link.outstandingPackets()) {
        if (!answered(q)) continue;
        this.pool.link.acknowledge(q.seq, p);
        decidedSeq = Math.max(decidedSeq ?? 0, q.seq);
      }
      if ((p.flags & FLAG_HAS_AGENT) !== 0) return this.onSwitchGrant(p, decidedSeq);
      return this.deliver(p);
    }
    // everything else is a sequenced packet from some server: dedup, then process and ACK
    const src = p.agent ?? p.machine;
    // one of this machine's own packets that the switch routed back here as new: held here then
    if (src === this.pool.machine && (p.type === 'acquire' || p.type === 'release') && (p.flags & (FLAG_DUP | FLAG_GRANTED)) === 0) this.pool.marks.heldAt(p.lock, p.seq);
    // The decider's ② copy and a DUP copy of the same ACQUIRE (its requester resent it before the
    // GRANT came back: RTO short against the path) share src:seq; whichever comes first must not
    // hide the other, or a DUP copy recorded as a ③ waiter swallows the ② grant: the agent's inca
    // stays one behind, its transfer is refused, and the holder's RELEASE only removes a waiter —
    // an agent with no holder and the refused grantee at its head, for ever (see onAcquire).
    const granted = p.type === 'acquire' && (p.flags & FLAG_GRANTED) !== 0;
    const seen = this.pool.dedup.seenOf(this.pool.streamOf(p), p.seq, granted);
    if (seen !== undefined && !this.pool.options.mutantNoDuplicateSuppression) {
      this.pool.count.duplicates++;
      // the re-ACK's DUP bit: see reAckDup (pool/receive-dedup.ts)
      this.ack(p, src, seen.status === 'accepted' ? 'duplicate' : seen.status, reAckDup(seen, (p.flags & FLAG_DUP) !== 0));
      return;
    }
    const status = this.process(p);
    this.pool.dedup.record(this.pool.streamOf(p), p.seq, status, granted, this.pool.clock.nowNs(), (p.flags & FLAG_DUP) !== 0);
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
        this.pool.transfers.addGrant(p);
        this.completeTransfers();
        return 'accepted';
      case 'transfer':
        if ((p.flags & FLAG_VOID) !== 0) return 'accepted'; // a filler for a void FREE / GRANT (install)
        this.pool.transfers.addEntry(p, this.pool.clock.nowNs());
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
    if ((p.flags & FLAG_GRANTED) !== 0 && this.pool.stuck.takeWrittenOff(p)) return 'duplicate';
    // a DUP copy stands for its request's first decision: once that ② grant is counted here it is
    // spent, whether a holder still holds it or not (pool/counted-grants.ts; swarm seed 492)
    if ((p.flags & (FLAG_DUP | FLAG_GRANTED)) === FLAG_DUP && this.pool.options.mutantRecountDupGrant !== true && this.pool.countedGrants.has(p.lock, p.machine, p.task)) {
      this.pool.count.spentDuplicates++;
      return 'duplicate';
    }
    const givenUp = this.pool.givenUp.has(p.lock, p.machine, p.task);
    const requesterSeq = (p.flags & FLAG_DUP) !== 0 ? this.requesterSeqOf(p) : undefined;
    const outcome = this.pool.apply(p.lock, { type: 'acquire', packet: p, givenUp, requesterSeq });
    return outcome === 'bounce' ? this.bounce(p) : (outcome as AckStatus);
  }

  /** The seq of a duplicate ACQUIRE as its requester numbered it, when known (agent-state.ts grantedDuplicate). */
  private requesterSeqOf(p: LockPacket): number | undefined {
    const src = p.agent ?? p.machine;
    if ((p.flags & FLAG_BOUNCED) === 0) return src === p.machine ? p.seq : undefined;
    // a copy bounced by this machine carries this machine's seq: the bounce remembered the requester's
    return src === this.pool.machine ? this.pool.bouncedOrigins.seqOf(p.lock, p.machine, p.task) : undefined;
  }

  private onRelease(p: LockPacket): AckStatus {
    if (this.pool.apply(p.lock, { type: 'release', packet: p }) === 'accepted') {
      this.pool.stuck.resolved(p);
      return 'accepted';
    }
    if (this.recordedElsewhere(p)) {
      this.pool.count.staleReleases++;
      this.pool.stuck.resolved(p);
      return 'duplicate';
    }
    const a = this.pool.agentOf(p.lock);
    if (this.pool.stuck.longEnough(p, this.pool.clock.nowNs())) {
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
        this.pool.count.droppedAborts++;
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
    if (p.machine !== this.pool.machine || (p.flags & FLAG_ABORT) === 0 || this.pool.pendingAgentOf(p.lock) !== undefined || this.pool.transfers.hasGrantFor(p.lock)) return false;
    // Nor while entries of a transfer of the lock to this machine arrived lately without their
    // GRANT: the decider accepted it and its first copy was lost (the sender resends it every RTO),
    // and the grantee may be recorded out of this machine's sight — the ACK of its bounced copy
    // lost (wide sweep, 10% faults, seeds 37 and 109). Entries of a refused transfer age out.
    if (this.pool.transfers.hasEntriesFor(p.lock, this.pool.clock.nowNs() - this.pool.stuck.afterNs)) {
      this.pool.count.reissueDeferred++;
      return false;
    }
    for (const [t, listener] of this.pool.listeners) if (t !== p.task && listener.lock === p.lock && this.pool.recordedTasks.has(t)) return false;
    // Nor while another local ACQUIRE of the lock, or another timeout-free, is undecided: its
    // lifetime would be the one the timeout-free ends (see timeoutFreeUnsafe). The abort keeps
    // circling; once the packet is answered, an agent arrived here takes the abort itself.
    if (this.pool.timeoutFreeUnsafe(p.lock, p.task)) {
      this.pool.count.abortsBehindAcquire++;
      return false;
    }
    return true;
  }

  private reissueAbort(p: LockPacket): AckStatus {
    this.pool.count.reissuedAborts++;
    const seq = this.pool.link.send({ type: 'release', lock: p.lock, machine: this.pool.machine, task: p.task, mode: p.mode, incarnation: 0, flags: FLAG_ABORT }, (ack) => this.abortAnswered(p.task, ack));
    this.pool.marks.ender(p.lock, seq);
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
    return home !== undefined && home !== this.pool.machine;
  }

  /**
   * §13.4, one lost ② copy: the decider counted a shared grant whose GRANTED copy never reached
   * the agent, so the holder's RELEASE (flagged GRANTED by its client) finds nobody and the
   * incarnations never match again. After `stuckAfterNs` the agent counts the copy and the release
   * together; should the copy turn up later after all, it is ignored (`writtenOff`). Only at the
   * grant's home (see recordedElsewhere).
   */
  private writeOffLostCopy(p: LockPacket): AckStatus {
    this.pool.stuck.writeOff(p);
    this.pool.apply(p.lock, { type: 'write-off', packet: p });
    return 'accepted';
  }

  /** ① the switch granted a free lock: the GRANT carries an empty agent. */
  private onSwitchGrant(p: LockPacket, decidedSeq?: number): void {
    const listener = this.pool.listeners.get(p.task);
    if (listener === undefined && this.pool.discardedTasks.has(p.task)) return;
    this.install(p, [], decidedSeq);
  }

  /** Records how this machine's abort-RELEASE of `task` was answered (client and reissued aborts). */
  abortAnswered(task: number, ack: LockPacket): void {
    if (ack.type === 'ack' && ackStatusOf(ack.flags) === 'freed') {
      this.pool.discardedTasks.add(task);
      // A late GRANT of this task taken silently while the abort was out (spec §5.2: "the abort
      // will release it"): this abort was a timeout-free and released nothing here (agent-state.ts)
      this.pool.apply(ack.lock, { type: 'abort-freed', task });
      // other aborts of the lock circling here must not reissue at once: a bounced copy may be
      // decided again as ① to this machine, its GRANT still on the way (wide sweep, 10%, seed 364)
      this.pool.stuck.restart(ack.lock);
    }
  }

  private noteGivenUp(lid: LockId, mid: NodeId, task: number): void {
    this.pool.givenUp.note(lid, mid, task);
  }

  private completeTransfers(): void {
    for (const { grant, queue } of this.pool.transfers.takeComplete()) this.install(grant, queue);
  }

  /**
   * Installs an agent carried by a GRANT (① or ⑧); see agent-state.ts. `decidedSeq`: for a ①
   * GRANT, this machine's ACQUIRE copy the decider granted. The lifetime began when the decider
   * took that ACQUIRE or this machine's own transfer GRANT (a self-transfer), if it was one: what
   * this machine sent after it is of the new lifetime. Else (a transfer from elsewhere) only what
   * it sends from now on is known to be.
   */
  private install(g: LockPacket, queue: Waiter[], decidedSeq?: number): void {
    const self = g.agent === this.pool.machine && g.seq > 0 ? g.seq : decidedSeq;
    this.pool.apply(g.lock, { type: 'install', grant: g, queue, newId: this.pool.newAgentId(), anchorSeq: self ?? this.pool.link.lastSeq(g.lock) });
  }

  /** A GRANT reaches its task; a GRANT nobody waits for is released at once (spec §5.2 stray grants). */
  deliver(g: LockPacket): void {
    if (g.machine !== this.pool.machine) return;
    const listener = this.pool.listeners.get(g.task);
    if (listener) {
      listener.granted(g);
      return;
    }
    if (this.pool.tryLocalRelease(g.lock, g.task) !== 'done') {
      this.pool.link.send({ type: 'release', lock: g.lock, machine: this.pool.machine, task: g.task, mode: g.mode, incarnation: 0, flags: 0 });
    }
  }

  /**
   * FREE or transfer GRANT refused (or a timeout-free refused): restore the agent and wait for the
   * delayed ② copies. `resent`: the refused packet went out more than once, so the refusal may
   * answer an earlier copy (see agent-state.ts refused).
   */
  private onRefused(p: LockPacket, resent: boolean): void {
    const movedOn = resent && this.pool.options.mutantTrustReRefusal !== true && this.mayHaveMovedOn(p);
    this.pool.apply(p.lock, { type: 'refused', packet: p, newId: this.pool.newAgentId(), resent, movedOn });
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
    if (this.pool.transfers.hasGrantFor(p.lock) || this.pool.transfers.hasEntriesFor(p.lock, this.pool.clock.nowNs() - this.pool.stuck.afterNs, this.pool.machine)) return true;
    const toHere = p.type === 'grant' && p.machine === this.pool.machine;
    if (toHere && p.mode === 'shared') return true;
    return this.pool.link.someOutstanding(
      (q) =>
        q.lock === p.lock &&
        q.type === 'acquire' &&
        q.machine === this.pool.machine &&
        q.seq > p.seq &&
        (q.flags & (FLAG_DUP | FLAG_GRANTED)) === 0 &&
        (!toHere || this.pool.marks.enderBetween(p.lock, p.seq, q.seq)),
    );
  }

  private bounce(p: LockPacket): AckStatus {
    this.pool.count.bounced++;
    this.pool.watchdog.noteBounce(p.lock);
    const { seq: _seq, agent: _agent, ...rest } = p;
    const packet = { ...rest, flags: p.flags | FLAG_BOUNCED };
    if (p.type === 'acquire' && (p.flags & (FLAG_DUP | FLAG_BOUNCED | FLAG_GRANTED)) === FLAG_DUP && (p.agent ?? p.machine) === p.machine) {
      this.pool.bouncedOrigins.note(p.lock, p.machine, p.task, p.seq); // see agent-state.ts grantedDuplicate
    }
    // a bounced copy of this machine's own ACQUIRE: its requester only saw the first hop's ACK,
    // so whether an agent recorded it is learned here (see mayReissueAbort)
    const onAck = p.type === 'acquire' && p.machine === this.pool.machine ? (ack: LockPacket) => this.noteRecorded(p.task, ack) : undefined;
    const delayNs = this.pool.backoff.delayNs(p.lock, this.pool.clock.nowNs());
    if (delayNs === 0) this.pool.link.send(packet, onAck);
    else {
      const bouncedOn = this.pool.link;
      void this.pool.clock.sleep(delayNs).then(() => {
        if (this.pool.stopped) return;
        const link = deferredBounceLink(bouncedOn, this.pool.link); // none after a recovery replaced it
        if (!link) return void this.pool.count.staleBounces++;
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
    const travels = status === 'bounced' && (ack.flags & FLAG_DUP) === 0 && ack.machine !== this.pool.machine;
    if (status === 'accepted' || travels) this.pool.recordedTasks.add(task);
  }

  /** `dup`: the ACK's DUP bit, by default the packet's own (see the re-ACK in receive). */
  ack(p: LockPacket, src: NodeId, status: AckStatus, dup = (p.flags & FLAG_DUP) !== 0): void {
    const flags = ackFlags(status) | (dup ? FLAG_DUP : 0);
    if (src === this.pool.machine) {
      this.pool.link.acknowledge(p.seq, { ...p, type: 'ack', flags });
      return;
    }
    // the DUP bit tells a requester that a BOUNCED status does not prove its request reached an agent (§5.2)
    this.pool.port.send({ type: 'ack', lock: p.lock, machine: this.pool.machine, task: p.task, mode: p.mode, incarnation: 0, seq: p.seq, flags, dst: src });
  }
}
