import type { Clock, RemoteAddr, Verbs } from '@lockfabric/ports';
import { entryToBytes, wordAt } from './entry.js';
import { toTs16 } from './timestamp.js';

export interface ClockSyncSettings {
  readonly periodNs: number;
  readonly timeoutNs: number;
}

/**
 * One compute node's timestamp base, aligned with the other CNs through a counter word on the
 * memory node (paper §5.3): every CN adds 1; the one that brings it to #CNs writes 0; all poll
 * until they read 0 and take that moment as their new origin. Precision is one READ latency.
 * Timestamps only steer fairness, so a round that times out just keeps the previous origin.
 */
export class CnClock {
  rounds = 0;
  failedRounds = 0;
  private baseNs: number;
  private lastStartNs = Number.NEGATIVE_INFINITY;
  private syncing = false;

  constructor(
    private readonly clock: Clock,
    private readonly settings: ClockSyncSettings,
  ) {
    this.baseNs = clock.nowNs();
  }

  /** Microseconds since this CN's sync origin, 16 bits. */
  ts16(): number {
    return toTs16(this.clock.nowNs() - this.baseNs);
  }

  get originNs(): number {
    return this.baseNs;
  }

  /** True when a round should start now (at most one runs at a time per CN). */
  due(): boolean {
    return this.settings.periodNs > 0 && !this.syncing && this.clock.nowNs() - this.lastStartNs >= this.settings.periodNs;
  }

  async sync(verbs: Verbs, counter: RemoteAddr, nodes: number): Promise<boolean> {
    if (this.syncing) return false;
    this.syncing = true;
    this.lastStartNs = this.clock.nowNs();
    try {
      const arrived = await verbs.faa(counter, 1n);
      if (arrived + 1n >= BigInt(Math.max(1, nodes))) await verbs.write(counter, entryToBytes(0n));
      const giveUpNs = this.clock.nowNs() + this.settings.timeoutNs;
      for (;;) {
        if (wordAt(await verbs.read(counter, 8), 0) === 0n) {
          this.baseNs = this.clock.nowNs();
          this.rounds++;
          return true;
        }
        if (this.clock.nowNs() >= giveUpNs) {
          this.failedRounds++;
          return false;
        }
      }
    } finally {
      this.syncing = false;
    }
  }
}
