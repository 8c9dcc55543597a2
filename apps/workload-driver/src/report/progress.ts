/**
 * Progress of a long command on stderr. On a terminal: a one-line bar redrawn in place. Elsewhere
 * (CI logs, pipes): a plain line every `LINE_EVERY_MS`, the first only once a run has taken that
 * long, so short runs print nothing and long ones show they are alive. Silent with `--json`.
 */
export const LINE_EVERY_MS = 10_000;

export interface ProgressSink {
  readonly isTTY: boolean;
  write(text: string): unknown;
}

export class ProgressBar {
  private lastDrawMs: number;
  private readonly enabled: boolean;
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    options: { enabled?: boolean; sink?: ProgressSink; nowMs?: () => number } = {},
  ) {
    this.sink = options.sink ?? { isTTY: process.stderr.isTTY === true, write: (text) => process.stderr.write(text) };
    this.nowMs = options.nowMs ?? Date.now;
    this.enabled = options.enabled ?? true;
    this.tty = this.sink.isTTY;
    this.lastDrawMs = this.tty ? Number.NEGATIVE_INFINITY : this.nowMs();
  }

  private readonly sink: ProgressSink;
  private readonly nowMs: () => number;

  update(fraction: number, detail = ''): void {
    if (!this.enabled) return;
    const now = this.nowMs();
    const clamped = Math.max(0, Math.min(1, fraction));
    const percent = `${(clamped * 100).toFixed(0).padStart(3)}%`;
    if (!this.tty) {
      if (now - this.lastDrawMs < LINE_EVERY_MS || clamped >= 1) return;
      this.lastDrawMs = now;
      this.sink.write(`${this.label}: ${percent.trim()}${detail ? ` ${detail}` : ''}\n`);
      return;
    }
    if (now - this.lastDrawMs < 100 && fraction < 1) return;
    this.lastDrawMs = now;
    const width = 30;
    const filled = Math.round(clamped * width);
    this.sink.write(`\r${this.label} [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${percent} ${detail}\x1b[K`);
  }

  done(): void {
    if (this.enabled && this.tty) this.sink.write('\r\x1b[K');
  }
}
