import type { Counter } from './metrics.js';

/**
 * A Prometheus counter fed from running totals kept elsewhere (NIC counters, malformed-input
 * counts, switch decisions), one total per value of a single label. Each `update` adds what grew
 * since the last one; a total that went down was reset (its owner restarted), so all of it is new.
 */
export class TotalsCounter {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly counter: Counter,
    /** The label the totals are keyed by, or undefined for a counter without labels (key ''). */
    private readonly label: string | undefined,
  ) {}

  update(totals: Readonly<Record<string, number | undefined>>): void {
    for (const [value, total] of Object.entries(totals)) {
      if (total === undefined) continue;
      const previous = this.seen.get(value) ?? 0;
      const delta = total >= previous ? total - previous : total;
      if (delta > 0) this.counter.inc(this.label === undefined ? undefined : { [this.label]: value }, delta);
      this.seen.set(value, total);
    }
  }
}
