import type { Clock, LockId } from '@lockfabric/ports';
import type { ReliableLink } from '../reliable-link.js';
import type { Agent, FissPolicy } from './agent.js';

/**
 * Starvation prevention (spec §4.6): while a writer waits behind shared holders, the agent's
 * machine tells the switch (STARVE, here `notify`) every period, so the decider stops granting ②.
 */
export class StarvationNotifier {
  private readonly starving = new Set<LockId>();

  constructor(
    private readonly policy: FissPolicy,
    private readonly periodNs: number,
    private readonly clock: Clock,
    /** The machine's current link (recovery replaces it). */
    private readonly link: () => ReliableLink,
    /** Whether `a` is still the lock's live agent on this machine. */
    private readonly isLive: (lid: LockId, a: Agent) => boolean,
    private readonly machine: number,
  ) {}

  maybeStart(lid: LockId, a: Agent): void {
    if (this.policy !== 'starvation-prevention' || a.mode !== 'shared' || this.starving.has(lid)) return;
    if (!a.wqueue.some((w) => w.mode === 'exclusive')) return;
    this.starving.add(lid);
    void this.loop(lid, a);
  }

  /** The agent left (handed on): its loop ends at the next period. */
  stop(lid: LockId): void {
    this.starving.delete(lid);
  }

  clear(): void {
    this.starving.clear();
  }

  private async loop(lid: LockId, a: Agent): Promise<void> {
    while (this.starving.has(lid) && this.isLive(lid, a) && a.wqueue.some((w) => w.mode === 'exclusive')) {
      this.link().send({ type: 'notify', lock: lid, machine: this.machine, task: 0, mode: 'shared', incarnation: 0, flags: 0 });
      await this.clock.sleep(this.periodNs);
    }
    this.starving.delete(lid);
  }
}
