import type { LockId, LockPacket, SwitchPort } from '@lockfabric/ports';
import { createSequencedLink } from '../rack-links.js';
import type { RecoveryClientView } from '../recovery/recovery-client.js';
import type { AgentRecord, MachineOrders, ServerReport } from '../recovery/recovery-state.js';
import { requestKey } from '../recovery/recovery-state.js';
import { FLAG_GRANTED, FLAG_INVALID, ackFlags } from '../wire.js';
import type { AgentValue } from './agent-state.js';
import type { PoolInternals } from './pool-internals.js';
import { answeredBySwitchGrant } from './request-copies.js';

/**
 * The agent pool's side of recovery (FissLock §5.3; spec §7.2, §12.9): the whole-machine S1/S2
 * hooks that recovery/machine-recovery.ts and the live responder drive (pause, report, apply the
 * orders on a new link), and the per-lock repair's quarantine, report and orders that
 * recovery/lock-repair.ts drives. It owns the recovery clients and the pause; everything else it
 * changes is the pool's (PoolInternals).
 */
export class PoolRecoveryHooks {
  /** Clients of this machine that can say what they hold and wait for (spec §2.3), for S1. */
  private readonly recoveryClients = new Set<RecoveryClientView>();
  private paused = false;
  private discarded = 0;

  constructor(private readonly pool: PoolInternals) {}

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
    this.swapLink({ machine: this.pool.machine, send: () => void this.discarded++, onPacket: () => () => undefined });
  }

  /** S1, second half: this machine's agents (live and pending) and its clients' requests. */
  recoveryReport(): ServerReport {
    const record = (lid: LockId, a: AgentValue, state: 'live' | 'pending'): AgentRecord => ({
      lid,
      machine: this.pool.machine,
      mode: a.mode,
      holders: [...a.holders].map((h) => {
        const [mid, task] = h.split(':');
        return { mid: Number(mid), task: Number(task) };
      }),
      wqueue: a.wqueue.map((w) => ({ mid: w.mid, task: w.task, mode: w.mode })),
      state,
    });
    const agents = [...this.pool.liveAgents().map(([lid, a]) => record(lid, a, 'live')), ...this.pool.pendingAgents().map(([lid, a]) => record(lid, a, 'pending'))];
    const clients = [...this.recoveryClients].flatMap((c) => c.recoveryRecords());
    return { machine: this.pool.machine, agents, clients };
  }

  /**
   * S2 on this machine: every agent not in `orders` is deleted, the ordered ones are installed at
   * incarnation 0, in-flight transfers and the dedup window are forgotten (sequence numbers restart
   * with a new link, which the switch's S3 matches), then granted tasks are woken and dropped ones
   * aborted. Lock operations resume with the new link.
   */
  applyRecovery(orders: MachineOrders): void {
    this.swapLink(this.pool.port);
    this.pool.states.clear(); // S2 frees a lock with neither holders nor waiters: nothing stays parked
    this.pool.dedup.clearSequenced();
    this.pool.transfers.clear();
    this.pool.starvation.clear();
    this.pool.discardedTasks.clear();
    this.pool.recordedTasks.clear();
    this.pool.marks.clear();
    for (const r of orders.agents) this.pool.restoreAgent(r.lid, r);
    for (const order of orders.abort) {
      this.pool.listeners.delete(order.task);
      for (const c of this.recoveryClients) c.recoveryAbort(order.lid, order.task, order.reason);
    }
    this.paused = false;
    for (const w of orders.wake) {
      const grant: LockPacket = { type: 'grant', lock: w.lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: 0, seq: 0, flags: 0 };
      this.pool.listeners.get(w.task)?.granted(grant);
    }
  }

  /** This machine has failed (sim and tests): nothing it does reaches the network again, nothing reaches it. */
  failStop(): void {
    this.pool.stop();
    this.paused = true;
    this.swapLink({ machine: this.pool.machine, send: () => void this.discarded++, onPacket: () => () => undefined });
  }

  /** Recovery is the one place that replaces the link (a new sequence space). */
  private swapLink(port: SwitchPort): void {
    this.pool.link.stop();
    const link = createSequencedLink(this.pool.machine, port, this.pool.clock, this.pool.options);
    link.intercept = (p) => this.interceptQuarantined(p);
    this.pool.setLink(link);
  }

  /**
   * Recovery S1: the requests of this machine still unanswered on the link settle as accepted
   * (their tasks are in the report; S2 decides them), so nothing waits on the old link.
   */
  settleOutstandingAcquires(): number {
    let settled = 0;
    for (const p of this.pool.link.outstandingPackets()) {
      if (p.type !== 'acquire' || p.machine !== this.pool.machine || !this.pool.listeners.has(p.task)) continue;
      const ack: LockPacket = { ...p, type: 'ack', flags: ackFlags('accepted'), dst: this.pool.machine };
      if (this.pool.link.acknowledge(p.seq, ack)) settled++;
    }
    return settled;
  }

  // ---- per-lock repair (spec §12.9: T_STUCK watchdog, S1–S3 for one lock) ----
  // Driven by recovery/lock-repair.ts; the reasoning is in recovery/README.md.

  /**
   * A per-lock repair begins: from now until `applyLockRepair`, nothing of `lid` leaves this
   * machine (sends are answered locally as accepted, FREEs as freed) and every arriving packet of
   * it is acknowledged and dropped, so the lock's packets in flight die out while every other lock
   * goes on. Local state of the lock may still change (a local grant or release): S1 reads it at the end.
   */
  quarantineLock(lid: LockId): void {
    this.pool.quarantined.touch(lid, this.pool.clock.nowNs());
    this.pool.starvation.stop(lid);
  }

  /** What the repair's drain waits for: this machine's unacknowledged packets of `lid`, and when the last one of it arrived. */
  quarantineState(lid: LockId): { readonly unacked: number; readonly lastArrivalNs: number } {
    return { unacked: this.pool.link.outstandingPackets().filter((q) => q.lock === lid).length, lastArrivalNs: this.pool.quarantined.lastArrivalNs(lid) };
  }

  /** S1 for one lock: its agents here (live and pending) and the local clients' records of it. */
  lockReport(lid: LockId): ServerReport {
    const full = this.recoveryReport();
    return { machine: this.pool.machine, agents: full.agents.filter((a) => a.lid === lid), clients: full.clients.filter((c) => c.lid === lid) };
  }

  /**
   * S2 for one lock: the lock's agent, pending agent, transfers in assembly and bookkeeping here are
   * replaced by the ordered agent (incarnation 0, as S3 writes the decider); tasks are aborted and
   * woken as ordered; the quarantine ends. Sequence windows, the dedup window and other locks stay.
   */
  applyLockRepair(lid: LockId, orders: MachineOrders): void {
    this.pool.states.delete(lid);
    this.pool.transfers.forgetLock(lid);
    this.pool.starvation.stop(lid);
    this.pool.backoff.forget(lid);
    this.pool.stuck.restart(lid);
    this.pool.watchdog.clear(lid);
    for (const r of orders.agents) if (r.lid === lid) this.pool.restoreAgent(lid, r);
    // S2 aborts only requests their clients gave up (no machine failed): nobody waits to be failed
    for (const order of orders.abort) if (order.lid === lid) this.pool.listeners.delete(order.task);
    this.pool.quarantined.end(lid);
    for (const w of orders.wake) {
      if (w.lid !== lid) continue;
      const grant: LockPacket = { type: 'grant', lock: w.lid, machine: w.mid, task: w.task, mode: w.mode, incarnation: 0, seq: 0, flags: 0 };
      this.pool.listeners.get(w.task)?.granted(grant);
    }
  }

  /** The link's answer to a send of a quarantined lock (see quarantineLock): accepted, or freed for a FREE. */
  interceptQuarantined(p: Omit<LockPacket, 'seq' | 'agent'>): LockPacket | undefined {
    if (!this.pool.quarantined.active || !this.pool.quarantined.has(p.lock)) return undefined;
    return { ...p, type: 'ack', seq: 0, flags: ackFlags(p.type === 'free' ? 'freed' : 'accepted'), dst: this.pool.machine };
  }

  /** An arriving packet of a quarantined lock: ACKs go on as usual (false); anything else is acknowledged and dropped. */
  absorbQuarantined(p: LockPacket): boolean {
    this.pool.quarantined.touch(p.lock, this.pool.clock.nowNs());
    if (p.type === 'ack') return false;
    if ((p.flags & FLAG_INVALID) !== 0) {
      if (p.agent === this.pool.machine) this.pool.link.acknowledge(p.seq, p);
      return true;
    }
    if (p.type === 'grant' && p.agent === undefined) {
      const answered = answeredBySwitchGrant(this.pool.machine, p);
      for (const q of this.pool.link.outstandingPackets()) if (answered(q)) this.pool.link.acknowledge(q.seq, p);
      return true;
    }
    const src = p.agent ?? p.machine;
    const granted = p.type === 'acquire' && (p.flags & FLAG_GRANTED) !== 0;
    const seen = this.pool.dedup.statusOf(this.pool.streamOf(p), p.seq, granted);
    if (seen === undefined) this.pool.dedup.record(this.pool.streamOf(p), p.seq, 'accepted', granted, this.pool.clock.nowNs());
    this.pool.ack(p, src, seen === undefined ? 'accepted' : seen === 'accepted' ? 'duplicate' : seen);
    return true;
  }

  /**
   * For the T_STUCK watchdog: a holder of this machine's agent `a` that is a task of this machine
   * no local client holds or waits for (undefined: none, or no client keeps records to tell).
   */
  orphanedLocalHolder(a: AgentValue): string | undefined {
    // only clients that keep records (RecoverableFissLockClient) can say a task is gone
    if (this.recoveryClients.size === 0) return undefined;
    const known = new Set([...this.recoveryClients].flatMap((c) => c.recoveryRecords()).map((r) => requestKey(r)));
    for (const h of a.holders) if (h.startsWith(`${this.pool.machine}:`) && !known.has(h) && !this.pool.listeners.has(Number(h.split(':')[1]))) return h;
    return undefined;
  }
}
