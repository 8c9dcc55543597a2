import type { Clock } from '@lockfabric/ports';

/** The lock manager's CPU as a queueing model: the two-sided baselines (`rpc`, `traditional`). */
export interface ServerCpuOptions {
  /** CPU time one request takes on one thread; 0 serves every request on arrival. */
  readonly requestNs: number;
  /** Server threads working in parallel (at least 1). */
  readonly threads: number;
  /** Requests admitted but not yet served; beyond it a request is dropped (the client retransmits). */
  readonly queueBound: number;
}

export interface ServerCpuStats {
  readonly served: number;
  readonly dropped: number;
  /** Most requests ever admitted and not yet served at once. */
  readonly maxQueued: number;
}

/**
 * Charges every request `requestNs` on the first of `threads` server threads to become free, FIFO:
 * a request's handler runs when its service ends, so the replies leave then. On `sim` this is what
 * makes the server CPU the bottleneck (ShiftLock §4, DSLR §6.1); on `live` the real CPU adds to it.
 * Time comes from the clock port only, so the model is deterministic in virtual time.
 */
export class ServerCpu {
  private readonly freeAtNs: number[];
  private queued = 0;
  private counts = { served: 0, dropped: 0, maxQueued: 0 };

  constructor(
    private readonly clock: Clock,
    private readonly options: ServerCpuOptions,
    private readonly signal: AbortSignal,
  ) {
    if (!(options.threads >= 1) || !(options.requestNs >= 0) || !(options.queueBound >= 1)) throw new RangeError('server cpu: threads and queueBound ≥ 1, requestNs ≥ 0');
    this.freeAtNs = new Array<number>(options.threads).fill(0);
  }

  get stats(): ServerCpuStats {
    return { ...this.counts };
  }

  /** Queues `work` behind the requests admitted before it; false when the queue is full (dropped). */
  admit(work: () => void): boolean {
    if (this.queued >= this.options.queueBound) {
      this.counts.dropped++;
      return false;
    }
    const now = this.clock.nowNs();
    let thread = 0;
    for (let i = 1; i < this.freeAtNs.length; i++) if ((this.freeAtNs[i] as number) < (this.freeAtNs[thread] as number)) thread = i;
    const doneNs = Math.max(now, this.freeAtNs[thread] as number) + this.options.requestNs;
    this.freeAtNs[thread] = doneNs;
    this.queued++;
    this.counts.maxQueued = Math.max(this.counts.maxQueued, this.queued);
    const run = () => {
      this.queued--;
      if (this.signal.aborted) return;
      this.counts.served++;
      work();
    };
    if (doneNs <= now) run();
    // No abort signal per sleep (thousands would listen on one signal); a stopped server just skips the work.
    else void this.clock.sleep(doneNs - now).then(run);
    return true;
  }
}
