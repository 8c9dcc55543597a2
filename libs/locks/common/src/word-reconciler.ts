import { FabricAccessError } from '@lockfabric/ports';
import type { Clock, LockId, RemoteAddr, Verbs } from '@lockfabric/ports';

/**
 * True for a verb that failed `unreachable`: its queue pair broke (live, a gRPC stream; in the sim,
 * the `flushedVerbs` fault) and, as a real QP flushes its work requests, the memory node may or may
 * not have run it. Any other failure status means the verb did not run.
 */
export function isUncertain(error: unknown): boolean {
  return error instanceof FabricAccessError && error.status === 'unreachable';
}

/** What a client needs to tell, from a lock word alone, whether it holds the word. */
export interface OwnedWord {
  readonly addr: RemoteAddr;
  readonly lock: LockId;
  /** True when `word` carries this client's hold (its tag). */
  mine(word: bigint): boolean;
  /** `word` with this client's hold taken out. */
  without(word: bigint): bigint;
}

export interface WordReconcilerLimits {
  /** First wait before reading the word again, doubled after every failed read, up to `maxWaitNs`. */
  readonly firstWaitNs: number;
  readonly maxWaitNs: number;
  /** Reads before giving up (a node that never comes back must not keep a loop alive forever). */
  readonly attempts: number;
}

const DEFAULT_LIMITS: WordReconcilerLimits = { firstWaitNs: 1_000, maxWaitNs: 500_000, attempts: 200 };

interface Job {
  cancelled: boolean;
  /** The verb the job has in flight, if any: a client taking the word back waits for it. */
  inflight: Promise<unknown> | undefined;
}

/**
 * Settles lock words that an `unreachable` verb left uncertain. A CAS lock whose acquire CAS ran
 * but whose answer was lost holds the word in the client's name while the client thinks it holds
 * nothing; a release WRITE that never ran leaves it held. A real client, once its link is back,
 * reads the word: its own tag there means the hold is its own, which it gives back with a CAS.
 * The client's own next acquire of the word `takeOver`s the job first, so a reconcile never frees
 * a hold the client made since. Nothing runs (no verb, no await) unless a verb failed.
 */
export class WordReconciler {
  private readonly jobs = new Map<string, Job>();

  constructor(
    private readonly verbs: Verbs,
    private readonly clock: Clock,
    private readonly limits: WordReconcilerLimits = DEFAULT_LIMITS,
  ) {}

  /** How many words have a reconcile running. */
  get pending(): number {
    return this.jobs.size;
  }

  /** After an uncertain verb on `word`: read it back in the background and give up a hold found there. */
  reconcile(word: OwnedWord): void {
    const key = addrKey(word.addr);
    const previous = this.jobs.get(key);
    if (previous) previous.cancelled = true;
    const job: Job = { cancelled: false, inflight: undefined };
    this.jobs.set(key, job);
    // A failure inside (a verb port that throws outright) ends the job; it must not escape as an unhandled rejection.
    void this.run(word, job).catch(() => undefined).finally(() => {
      if (this.jobs.get(key) === job) this.jobs.delete(key);
    });
  }

  /**
   * The client is about to use `addr` itself: a running reconcile stops before its next verb, and
   * the verb it has in flight completes first. Resolves at once (no await needed) when none runs.
   */
  takeOver(addr: RemoteAddr): Promise<unknown> | undefined {
    if (this.jobs.size === 0) return undefined;
    const key = addrKey(addr);
    const job = this.jobs.get(key);
    if (!job) return undefined;
    job.cancelled = true;
    this.jobs.delete(key);
    return job.inflight?.catch(() => undefined);
  }

  private async run(word: OwnedWord, job: Job): Promise<void> {
    let waitNs = this.limits.firstWaitNs;
    for (let attempt = 0; attempt < this.limits.attempts; attempt++) {
      await this.clock.sleep(waitNs);
      waitNs = Math.min(waitNs * 2, this.limits.maxWaitNs);
      if (job.cancelled) return;
      const seen = await this.step(job, () => this.read(word));
      if (seen === 'retry') continue;
      if (seen === 'stop' || job.cancelled || !word.mine(seen)) return;
      const old = await this.step(job, () => this.verbs.cas(word.addr, seen, word.without(seen), { lock: word.lock }));
      if (old === 'stop' || old === seen) return;
      // The CAS was lost again, or the word moved (readers joined): read it once more.
    }
  }

  /** One verb of the job: its value, `retry` when it failed uncertain, `stop` on any other failure. */
  private async step<T>(job: Job, verb: () => Promise<T>): Promise<T | 'retry' | 'stop'> {
    const running = verb();
    job.inflight = running;
    try {
      return await running;
    } catch (error) {
      return isUncertain(error) ? 'retry' : 'stop';
    } finally {
      job.inflight = undefined;
    }
  }

  private async read(word: OwnedWord): Promise<bigint> {
    const bytes = await this.verbs.read(word.addr, 8, { lock: word.lock });
    return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  }
}

function addrKey(addr: RemoteAddr): string {
  return `${addr.node}/${addr.region}/${addr.offset}`;
}
