import { LOCK_ATTR } from '@lockfabric/locks-common';
import type { ClientPorts, LockId } from '@lockfabric/ports';
import { WordLayout } from './lock-word.js';
import type { DslrOptions } from './options.js';

/** Span attribute keys DSLR adds to the shared ones. */
export const DSLR_ATTR = {
  kind: 'lockfabric.dslr.kind',
  slots: 'lockfabric.dslr.slots',
  resetCause: 'lockfabric.dslr.reset_cause',
  /** On `lock.release`: how the release ended (`released`, `fenced`, `expired`, `faa`) and the CAS it took. */
  releaseOutcome: 'lockfabric.dslr.release_outcome',
  releaseCas: 'lockfabric.dslr.release_cas',
} as const;

/** Why a lock word was rewritten by CAS (the `lock.reset` span's cause). */
export type ResetCause = 'skip' | 'resetter-zero' | 'drain-timeout-zero' | 'frozen-watchdog-zero' | 'skip-drained-zero' | 'paper-zero-after-skip';

/** What every part of one DSLR client shares: its ports, options and the word layout. */
export class DslrContext {
  readonly layout: WordLayout;

  constructor(
    readonly ports: ClientPorts,
    readonly options: DslrOptions,
    readonly protocolId: string,
  ) {
    this.layout = WordLayout.of(options.layout, options.counterLimit);
  }

  nowNs(): number {
    return this.ports.clock.nowNs();
  }

  /** Lease of a k-slot grant: k·λ (A9). */
  leaseNs(slots: number): number {
    return this.options.leaseNs * slots;
  }

  /**
   * How long the now-counters must stand still before the tickets ahead are presumed dead:
   * 2λ·clamp(δ, 1, k_max), δ the slots still ahead (§9). In fixed-lease mode (k_max = 1), 2λ.
   */
  stallThresholdNs(slotsAhead: number): number {
    if (this.options.paperLiteralFixedStallThreshold) return 2 * this.options.leaseNs;
    return 2 * this.options.leaseNs * Math.min(Math.max(slotsAhead, 1), this.options.maxSlots);
  }

  /** A sleep of DSLR's own making: the poll wait of a draining resetter, clamped to [ω, λ/2]. */
  pollWaitNs(slotsAhead: number): number {
    const { waitUnitNs, leaseNs } = this.options;
    return Math.min(Math.max(slotsAhead * waitUnitNs, waitUnitNs), leaseNs / 2);
  }

  /** Records one CAS rewrite of a lock word as a `lock.reset` span. */
  recordReset(lock: LockId, cause: ResetCause): void {
    this.ports.trace
      .startSpan('lock.reset', { attributes: { [LOCK_ATTR.protocol]: this.protocolId, [LOCK_ATTR.lock]: lock, [DSLR_ATTR.resetCause]: cause } })
      .end();
  }
}
