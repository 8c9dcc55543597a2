/** A one-line progress bar on a terminal (stderr); silent when stderr is not a TTY or output is JSON. */
export class ProgressBar {
  private lastDrawMs = 0;
  private readonly enabled: boolean;

  constructor(
    private readonly label: string,
    options: { enabled?: boolean } = {},
  ) {
    this.enabled = (options.enabled ?? true) && process.stderr.isTTY === true;
  }

  update(fraction: number, detail = ''): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.lastDrawMs < 100 && fraction < 1) return;
    this.lastDrawMs = now;
    const width = 30;
    const clamped = Math.max(0, Math.min(1, fraction));
    const filled = Math.round(clamped * width);
    process.stderr.write(`\r${this.label} [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${(clamped * 100).toFixed(0).padStart(3)}% ${detail}\x1b[K`);
  }

  done(): void {
    if (this.enabled) process.stderr.write('\r\x1b[K');
  }
}
