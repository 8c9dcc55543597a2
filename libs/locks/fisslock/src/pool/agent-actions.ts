import type { LockId, LockPacket } from '@lockfabric/ports';
import { FLAG_HAS_AGENT, FLAG_VOID, ackStatusOf } from '../wire.js';
import type { AgentAction, AgentCounter } from './agent-state.js';
import { startHandoverSpan } from './handover-span.js';
import type { PoolInternals } from './pool-internals.js';

/**
 * Carries out the actions the pure agent `step` returns (agent-state.ts), on the pool's link and
 * components: sends (with their ACK hooks back into `step`), deliveries, counters, the watchdog,
 * starvation notices, bounce back-off and stuck-release bookkeeping.
 */
export class AgentActions {
  constructor(private readonly pool: PoolInternals) {}

  perform(lid: LockId, action: AgentAction): void {
    switch (action.kind) {
      case 'send': {
        const hook = action.onAck;
        const onAck = hook ? (ack: LockPacket) => this.answered(lid, hook.kind, hook.id, ack) : undefined;
        let packet = action.packet;
        if (action.handover) {
          const span = startHandoverSpan(this.pool.options.trace, this.pool.machine, lid, action.handover.next, action.handover.releaser);
          if (span) packet = { ...packet, trace: span };
        }
        const seq = this.pool.link.send(packet, onAck);
        if (action.ender) this.pool.marks.ender(lid, seq);
        return;
      }
      case 'send-reached':
        this.pool.port.send(action.packet);
        return;
      case 'note-recorded':
        this.pool.recordedTasks.add(action.task);
        return;
      case 'deliver':
        this.pool.deliver(action.grant);
        return;
      case 'count':
        this.pool.count[action.counter satisfies AgentCounter]++;
        return;
      case 'void-old-handoffs':
        this.voidOldHandoffs(lid);
        return;
      case 'watch-waiter':
        this.pool.watchdog.noteWaiter(lid, action.agent);
        return;
      case 'watch-local-holder':
        this.pool.watchdog.noteLocalHolder(lid, action.holder);
        return;
      case 'watch-refused':
        this.pool.watchdog.noteRefused(lid);
        return;
      case 'watch-clear':
        this.pool.watchdog.clear(lid);
        return;
      case 'starve-check':
        this.pool.starvation.maybeStart(lid, action.agent);
        return;
      case 'starve-writer-queued':
        this.pool.starvation.writerQueuedLocally(lid, action.agent);
        return;
      case 'starve-stop':
        this.pool.starvation.stop(lid);
        return;
      case 'backoff-forget':
        this.pool.backoff.forget(lid);
        return;
      case 'stuck-write-off':
        this.pool.stuck.writeOff(action.packet);
        return;
      case 'grant-counted':
        this.pool.countedGrants.note(lid, action.mid, action.task);
        return;
      case 'stuck-restart':
        this.pool.stuck.restart(lid);
        return;
    }
  }

  /** The ACK of a FREE (freed or not) or of a transfer GRANT that the agent `id` sent. */
  private answered(lid: LockId, kind: 'free-answered' | 'grant-answered', id: number, ack: LockPacket): void {
    if (kind === 'free-answered') this.pool.apply(lid, { type: 'free-answered', id, freed: ackStatusOf(ack.flags) === 'freed' });
    else if (ack.type === 'ack') this.pool.apply(lid, { type: 'grant-answered', id });
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
    this.pool.count.voidedOnInstall += this.pool.link.voidOutstanding(old, (q) => ({ type: 'transfer', lock: q.lock, machine: this.pool.machine, task: 0, mode: q.mode, incarnation: 0, flags: FLAG_VOID, dst: this.pool.machine }));
  }
}
