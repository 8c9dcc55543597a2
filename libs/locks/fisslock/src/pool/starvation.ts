import type { Clock, LockId } from '@lockfabric/ports';
import type { SequencedLink } from '../rack-links.js';
import type { FissPolicy } from './agent.js';
import type { AgentValue } from './agent-state.js';

/**
 * The notices by which an agent tells the switch that a writer waits (op STARVE, here `notify`;
 * the decider sets the lock's policy bit):
 * - starvation prevention (spec §4.6): while a writer waits behind shared holders, every period,
 *   so the decider stops granting ② until the holders have drained;
 * - write-preferring: once, when a writer is queued locally (⑤) at a shared agent. The decider
 *   sets `ww` itself for a writer it forwards (③), but a ⑤ writer never passes the switch, so
 *   without the notice later readers were granted ② ahead of it (spec §13.7).
 */
export class StarvationNotifier {
  private readonly starving = new Set<LockId>();

  constructor(
    private readonly policy: FissPolicy,
    private readonly periodNs: number,
    private readonly clock: Clock,
    /** The machine's current link (recovery replaces it). */
    private readonly link: () => SequencedLink,
    /** The lock's live agent on this machine now. */
    private readonly liveAgent: (lid: LockId) => AgentValue | undefined,
    private readonly machine: number,
    /** Test-only mutant: no notice is ever sent. */
    private readonly muted = false,
  ) {}

  maybeStart(lid: LockId, a: AgentValue): void {
    if (this.muted || this.policy !== 'starvation-prevention' || a.mode !== 'shared' || this.starving.has(lid)) return;
    if (!a.wqueue.some((w) => w.mode === 'exclusive')) return;
    this.starving.add(lid);
    void this.loop(lid, a.id);
  }

  /** A writer of this machine was queued at the local agent `a` (⑤). */
  writerQueuedLocally(lid: LockId, a: AgentValue): void {
    if (this.policy === 'write-preferring' && a.mode === 'shared' && !this.muted) this.notify(lid);
    else this.maybeStart(lid, a);
  }

  /** The agent left (handed on): its loop ends at the next period. */
  stop(lid: LockId): void {
    this.starving.delete(lid);
  }

  clear(): void {
    this.starving.clear();
  }

  private notify(lid: LockId): void {
    this.link().send({ type: 'notify', lock: lid, machine: this.machine, task: 0, mode: 'shared', incarnation: 0, flags: 0 });
  }

  /** Notices every period while the agent `id` stays the lock's live agent here with a writer queued. */
  private async loop(lid: LockId, id: number): Promise<void> {
    for (;;) {
      const a = this.liveAgent(lid);
      if (!this.starving.has(lid) || a?.id !== id || !a.wqueue.some((w) => w.mode === 'exclusive')) break;
      this.notify(lid);
      await this.clock.sleep(this.periodNs);
    }
    this.starving.delete(lid);
  }
}
