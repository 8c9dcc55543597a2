import type { Completion, PostOptions, WorkRequest } from '@lockfabric/ports';

export type PostFn = (batch: readonly WorkRequest[], options?: PostOptions) => Promise<Completion[]>;

/**
 * Fences a compute node's own clients locally when its incarnation is retired (rejoin-watch.ts):
 * posts through a gate opened before `retire` complete `unreachable` without leaving the node, and
 * `drain` waits for the batches already on their way. Together they ensure no verb of the retired
 * incarnation reaches a memory node after the next incarnation has been admitted there.
 */
export class VerbGate {
  private generation = 0;
  private reason = '';
  private inflight = 0;

  constructor(private readonly node: number) {}

  /** Batches posted and not yet completed, over every generation. */
  get inflightBatches(): number {
    return this.inflight;
  }

  /**
   * A post function for one client, valid until the next `retire`. An open gate hands back the
   * fabric's own promise: an async wrapper here cost every verb three more promise reactions.
   */
  open(post: PostFn): PostFn {
    const generation = this.generation;
    const settled = () => void this.inflight--;
    return (batch, options) => {
      if (generation !== this.generation) {
        const detail = `aborted: compute node ${this.node} was declared dead and rejoined (${this.reason}); this client's verbs are refused locally`;
        return Promise.resolve(batch.map(() => ({ status: 'unreachable' as const, detail })));
      }
      let done: Promise<Completion[]>;
      try {
        done = post(batch, options);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      this.inflight++;
      done.then(settled, settled);
      return done;
    };
  }

  /** Closes every gate opened so far. */
  retire(reason: string): void {
    this.generation++;
    this.reason = reason;
  }

  /** Waits until no batch is in flight, at most `timeoutMs`; true when drained. */
  async drain(timeoutMs: number, pollMs = 10): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.inflight > 0) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    return true;
  }
}
