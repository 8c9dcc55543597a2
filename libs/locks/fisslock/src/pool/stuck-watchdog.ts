import type { Clock, LockId } from '@lockfabric/ports';
import type { AgentValue } from './agent-state.js';

/** Why the watchdog flagged a lock (spec §12.9). */
export type StuckReason = 'agent-without-holders' | 'orphaned-holder' | 'bouncing' | 'stalled-queue';

export interface StuckReport {
  readonly lid: LockId;
  readonly reason: StuckReason;
  readonly atNs: number;
}

/** What the watchdog reads of the pool when a suspicion comes due. */
export interface WatchdogView {
  /** The lock's live agent on this machine now. */
  agent(lid: LockId): AgentValue | undefined;
  /** A holder of this machine's agent that is a task of this machine no local client knows (undefined: cannot tell). */
  orphanedLocalHolder(lid: LockId, a: AgentValue): string | undefined;
  stopped(): boolean;
}

/**
 * The T_STUCK watchdog of one agent pool (spec §12.9). It watches two local signals, each a lock
 * that no protocol path can bring back:
 * - a refusal (FREE / transfer GRANT refused: the incarnations differ) after which, T_STUCK later,
 *   this machine's agent for the lock still has no holder (the ② copy the decider counted never
 *   came), or holds a task of this machine that no local client holds or waits for;
 * - a ② copy counted here for a task of this machine that, T_STUCK later, is still a holder no
 *   local client holds or waits for (a copy that circled past its holder's release);
 * - a waiter queued at this machine's agent while, T_STUCK later, the same agent still has the same
 *   holders and a waiter: a holder on another machine may be one nobody holds (its ② copy circled
 *   past its release). A long hold looks the same from here, so this one is only a suspicion: the
 *   repairer confirms it against the clients' records first (`lockLooksStuck`) and `dismiss`es it;
 * - a packet of the lock bouncing here again and again for T_STUCK (the decider names this machine,
 *   no agent is here or on its way).
 * It arms one timer per suspicion and never a periodic one, so a quiet run stays quiet (the
 * simulator ends when no event is left). A flagged lock is reported once until `clear`.
 */
export class StuckWatchdog {
  /** Locks with a refusal not yet resolved: when it was first seen. */
  private readonly refusedSince = new Map<LockId, number>();
  /** Locks whose packets bounce here: the first and the latest bounce of the spell. */
  private readonly bouncing = new Map<LockId, { firstNs: number; lastNs: number }>();
  private readonly reported = new Set<LockId>();
  /** Local ② holders to look at again (`lid/mid:task`). */
  private readonly holderChecks = new Set<string>();
  /** Locks with a queue check armed. */
  private readonly queueChecks = new Set<LockId>();
  reports = 0;

  constructor(
    private readonly tStuckNs: number,
    private readonly clock: Clock,
    private readonly view: WatchdogView,
    private readonly report: (r: StuckReport) => void,
  ) {}

  get enabled(): boolean {
    return this.tStuckNs > 0;
  }

  /** A FREE / transfer GRANT of this machine was refused and the agent restored. */
  noteRefused(lid: LockId): void {
    if (!this.enabled || this.refusedSince.has(lid)) return;
    const since = this.clock.nowNs();
    this.refusedSince.set(lid, since);
    void this.clock.sleep(this.tStuckNs).then(() => this.refusalDue(lid, since));
  }

  /** A ② copy made `holder` (a task of this machine) a holder of this machine's agent for `lid`. */
  noteLocalHolder(lid: LockId, holder: string): void {
    const id = `${lid}/${holder}`;
    if (!this.enabled || this.holderChecks.has(id)) return;
    this.holderChecks.add(id);
    void this.clock.sleep(this.tStuckNs).then(() => {
      this.holderChecks.delete(id);
      if (this.view.stopped()) return;
      const a = this.view.agent(lid);
      if (a?.holders.has(holder) && this.view.orphanedLocalHolder(lid, a) !== undefined) this.flag(lid, 'orphaned-holder');
    });
  }

  /** A waiter was queued at this machine's agent `a` for `lid`. */
  noteWaiter(lid: LockId, a: AgentValue): void {
    if (!this.enabled || this.queueChecks.has(lid)) return;
    this.queueChecks.add(lid);
    const holders = [...a.holders].sort().join(',');
    void this.clock.sleep(this.tStuckNs).then(() => {
      this.queueChecks.delete(lid);
      const now = this.view.agent(lid);
      if (this.view.stopped() || now?.id !== a.id || now.wqueue.length === 0) return;
      if ([...now.holders].sort().join(',') === holders) this.flag(lid, 'stalled-queue');
    });
  }

  /** The repairer found the lock well after all (e.g. a long hold): it may be reported again. */
  dismiss(lid: LockId): void {
    this.reported.delete(lid);
  }

  /** A packet of `lid` bounced here. */
  noteBounce(lid: LockId): void {
    if (!this.enabled) return;
    const now = this.clock.nowNs();
    const spell = this.bouncing.get(lid);
    // a pause of T_STUCK/4 without bounces ends the spell: the lock moved on in between
    if (!spell || now - spell.lastNs > this.tStuckNs / 4) {
      this.bouncing.set(lid, { firstNs: now, lastNs: now });
      return;
    }
    spell.lastNs = now;
    if (now - spell.firstNs >= this.tStuckNs) {
      this.bouncing.delete(lid);
      this.flag(lid, 'bouncing');
    }
  }

  /** The lock's state here moved on (an agent arrived, a FREE / transfer was accepted, a repair applied). */
  clear(lid: LockId): void {
    this.refusedSince.delete(lid);
    this.bouncing.delete(lid);
    this.reported.delete(lid);
  }

  private refusalDue(lid: LockId, since: number): void {
    if (this.refusedSince.get(lid) !== since || this.view.stopped()) return;
    this.refusedSince.delete(lid);
    const a = this.view.agent(lid);
    if (!a) return;
    if (a.holders.size === 0) this.flag(lid, 'agent-without-holders');
    else if (this.view.orphanedLocalHolder(lid, a) !== undefined) this.flag(lid, 'orphaned-holder');
  }

  private flag(lid: LockId, reason: StuckReason): void {
    if (this.reported.has(lid)) return;
    this.reported.add(lid);
    this.reports++;
    this.report({ lid, reason, atNs: this.clock.nowNs() });
  }
}
