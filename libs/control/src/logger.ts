/** Where control-plane code reports what operators need to see. Services plug in their own. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Drops every line (sim runs, tests). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/**
 * Where control-plane decoders report input that does not decode (DESIGN §4: counted by source,
 * logged at a bounded rate, dropped). Live: libs/live MalformedInputCounter; sim: `MalformedTally`.
 */
export interface MalformedSink {
  record(source: string, error: unknown, sender?: string): void;
}

/** A MalformedSink that only counts, by source: what a sim run needs. */
export class MalformedTally implements MalformedSink {
  private readonly counts = new Map<string, number>();

  record(source: string): void {
    this.counts.set(source, (this.counts.get(source) ?? 0) + 1);
  }

  count(source?: string): number {
    if (source !== undefined) return this.counts.get(source) ?? 0;
    let total = 0;
    for (const n of this.counts.values()) total += n;
    return total;
  }
}
