import { FabricAccessError } from '@lockfabric/ports';
import type { Completion, PostOptions, WorkRequest } from '@lockfabric/ports';

export type PostFn = (batch: readonly WorkRequest[], options?: PostOptions) => Promise<Completion[]>;
/** A post that calls `settled` once, when its batch's completions are known (LiveFabric's `SettlingPost`). */
export type SettlingPostFn = (batch: readonly WorkRequest[], options: PostOptions | undefined, settled: () => void) => Promise<Completion[]>;

/**
 * Fences a compute node's own clients locally when its incarnation is retired (rejoin-watch.ts):
 * posts through a gate opened before `retire` complete `unreachable` without leaving the node, and
 * `drain` waits for the batches already on their way. Together they ensure no verb of the retired
 * incarnation reaches a memory node after the next incarnation has been admitted there.
 *
 * `replaceRun` closes the gates the same way when the next run is prepared: a client of an earlier
 * run may still be running (an MCS waiter that gave up keeps watching its queue node for a grant
 * that a cut queue never sends), and the next run's client of the same index reuses that queue
 * node, so such a leftover would act on the new run's locks.
 */
export class VerbGate {
  private generation = 0;
  private refusal = '';
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
      if (generation !== this.generation) return this.refused(batch);
      let done: Promise<Completion[]>;
      try {
        done = post(batch, options);
      } catch (error) {
        return Promise.reject(postError(error));
      }
      this.inflight++;
      done.then(settled, settled);
      return done;
    };
  }

  /**
   * As `open`, over a post that reports when each batch has settled: the in-flight count drops in
   * that callback, so a verb costs no promise reaction here at all (`open` adds one per batch: one
   * promise and one microtask per verb of a live run, where nearly every batch is one verb).
   */
  openSettling(post: SettlingPostFn): PostFn {
    const generation = this.generation;
    const settled = () => void this.inflight--;
    return (batch, options) => {
      if (generation !== this.generation) return this.refused(batch);
      // Counted first: a post answered without the network calls `settled` before it returns.
      // One shared callback, no closure per post: a post either throws or calls it once, never both.
      this.inflight++;
      try {
        return post(batch, options, settled);
      } catch (error) {
        settled();
        return Promise.reject(postError(error));
      }
    };
  }

  /** A retired gate's answer: every verb unreachable, with the reason, and nothing posted. */
  private refused(batch: readonly unknown[]): Promise<Completion[]> {
    const detail = this.refusal;
    return Promise.resolve(batch.map(() => ({ status: 'unreachable' as const, detail })));
  }

  /** Closes every gate opened so far: this node's incarnation was declared dead. */
  retire(reason: string): void {
    this.close(`compute node ${this.node} was declared dead and rejoined (${reason})`);
  }

  /** Closes every gate opened so far: their clients belong to a run that `runId` replaces. */
  replaceRun(runId: string): void {
    this.close(`run ${runId} replaced the run this client belonged to`);
  }

  private close(why: string): void {
    this.generation++;
    this.refusal = `aborted: ${why}; this client's verbs are refused locally`;
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

/** A post that threw, as the rejection its promise would have carried. */
function postError(error: unknown): Error {
  return error instanceof Error ? error : new FabricAccessError('bad-request', `posting the batch threw ${String(error)}`);
}
