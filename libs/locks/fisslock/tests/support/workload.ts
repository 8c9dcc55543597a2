import { LockTimeoutError } from '@lockfabric/ports';
import type { Clock, Grant, LockClient, LockMode, NodeId } from '@lockfabric/ports';
import type { FaultSpec } from '@lockfabric/switch';
import { mulberry32 } from '@lockfabric/random';

/**
 * The random-workload pieces the FissLock sweeps share (sweep.ts, wide-run.ts, recovery-sim):
 * the seeded generator, the fault mixes, the online exclusion check and the client loop.
 */

/** Loss, duplication, reordering and delay at 2% each on every switch egress. */
export const FAULTS_2: FaultSpec = {
  rules: [{ loss: 0.02, duplicate: 0.02, reorder: 0.02, reorderNsMax: 20_000, delay: 0.02, delayNsMin: 1_000, delayNsMax: 50_000 }],
};

/** The same at 10% each (the bar every seed must clear). */
export const FAULTS_10: FaultSpec = {
  rules: [{ loss: 0.1, duplicate: 0.1, reorder: 0.1, reorderNsMax: 20_000, delay: 0.1, delayNsMin: 1_000, delayNsMax: 50_000 }],
};

/** FAULTS_10 on both links: the machine→switch copy too is lost, duplicated (ingested twice), reordered or delayed. */
export const FAULTS_10_BOTH_WAYS: FaultSpec = {
  rules: [{ direction: 'both', loss: 0.1, duplicate: 0.1, reorder: 0.1, reorderNsMax: 20_000, delay: 0.1, delayNsMin: 1_000, delayNsMax: 50_000 }],
};

/** mulberry32, so a seed replays the same workload. */
export const mulberry = mulberry32;

/**
 * Who holds each lock right now, from grant delivery to the release call (spec §11 property 1).
 * The simulator runs one event at a time, so a grant that conflicts with a current holder is a
 * violation the moment it is delivered.
 */
export class ExclusionMonitor {
  readonly violations: string[] = [];
  private readonly holders = new Map<number, Map<string, LockMode>>();

  /** Records `who` holding `lock`; returns the violations this grant caused (also kept in `violations`). */
  granted(lock: number, who: string, mode: LockMode, label: string): string[] {
    const current = this.holders.get(lock) ?? new Map<string, LockMode>();
    this.holders.set(lock, current);
    const found: string[] = [];
    for (const [other, held] of current) {
      if (held === 'exclusive' || mode === 'exclusive') found.push(`${label}: lock ${lock} ${mode} to ${who} while ${other} holds ${held}`);
    }
    current.set(who, mode);
    this.violations.push(...found);
    return found;
  }

  released(lock: number, who: string): void {
    this.holders.get(lock)?.delete(who);
  }

  /** The locks held right now, with their holders. */
  held(): Map<number, Set<string>> {
    const out = new Map<number, Set<string>>();
    for (const [lock, current] of this.holders) if (current.size > 0) out.set(lock, new Set(current.keys()));
    return out;
  }

  /** Ends every hold whose holder `who` matches (a failed machine's holds end when it fails). */
  dropHolders(match: (who: string) => boolean): void {
    for (const current of this.holders.values()) for (const who of [...current.keys()]) if (match(who)) current.delete(who);
  }
}

export interface WorkerLoopOptions<G extends Grant> {
  readonly nodes: readonly NodeId[];
  readonly clientsPerNode: number;
  readonly ops: number;
  readonly lockCount: number;
  readonly timeoutMs: number;
  readonly rnd: () => number;
  readonly clock: Clock;
  readonly monitor: ExclusionMonitor;
  /** Names the violation messages (e.g. the seed). */
  readonly label: () => string;
  client(node: NodeId, index: number): LockClient<G>;
  holdNs(rnd: () => number): number;
  /** Pause after each release (none when absent; with it, the worker always sleeps, 0 included). */
  gapNs?(rnd: () => number): number;
  /** Called right after a grant was checked (audits, logs). */
  onGranted?(lock: number, who: string, grant: G, violations: string[]): void;
  onReleased?(lock: number, who: string, grant: G): void;
}

export interface WorkerCounts {
  granted: number;
  timedOut: number;
  untyped: number;
  finished: boolean;
}

/**
 * Two-phase workers on every node: take a random lock in a random mode, hold it, release it.
 * Returns the live counts and a promise of the end of all workers (the caller drives the
 * scheduler; `finished` turns true when every worker is done).
 */
export function startWorkers<G extends Grant>(o: WorkerLoopOptions<G>): { counts: WorkerCounts; done: Promise<void> } {
  const counts: WorkerCounts = { granted: 0, timedOut: 0, untyped: 0, finished: false };
  const workers = o.nodes.flatMap((node) =>
    Array.from({ length: o.clientsPerNode }, (_, k) => async () => {
      const client = o.client(node, k);
      const me = `${node}/${k}`;
      for (let i = 0; i < o.ops; i++) {
        const lock = Math.floor(o.rnd() * o.lockCount);
        const mode: LockMode = o.rnd() < 0.5 ? 'shared' : 'exclusive';
        let grant: G;
        try {
          grant = await client.acquire(lock, mode, { timeoutMs: o.timeoutMs });
        } catch (error) {
          if (error instanceof LockTimeoutError) counts.timedOut++;
          else counts.untyped++;
          continue;
        }
        counts.granted++;
        const found = o.monitor.granted(lock, me, mode, o.label());
        o.onGranted?.(lock, me, grant, found);
        await o.clock.sleep(o.holdNs(o.rnd));
        o.monitor.released(lock, me);
        o.onReleased?.(lock, me, grant);
        await client.release(grant);
        if (o.gapNs) await o.clock.sleep(o.gapNs(o.rnd));
      }
    }),
  );
  const done = Promise.all(workers.map((w) => w())).then(() => {
    counts.finished = true;
  });
  return { counts, done };
}
