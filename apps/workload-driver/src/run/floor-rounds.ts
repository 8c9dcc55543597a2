// The floor and the uncontended probe in alternating rounds. On a shared machine the bare round
// trip moves by a factor of two or more within seconds; a floor taken in one block and the probe
// in another divides figures of different loads. A round's floor and its probe share the load
// of that moment, so each round's ratio is like for like, and the median over rounds is the figure.
import type { HistoryEvent } from '@lockfabric/check';
import { RunStats } from '@lockfabric/workloads';

/** Rounds of `bench --floor-rounds` unless given: enough for a median that one jump of the floor does not move. */
export const DEFAULT_FLOOR_ROUNDS = 10;

/** Probe operations and bare round trips (of each path) per round; totals split as evenly as they go. */
export interface RoundPlan {
  readonly operations: readonly number[];
  readonly floorRoundTrips: readonly number[];
}

/** `total` in `parts` shares, the first `total % parts` one larger. */
function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, k) => Math.floor(total / parts) + (k < total % parts ? 1 : 0));
}

/** At most one round per operation, so no round probes nothing. */
export function planRounds(operations: number, floorRoundTrips: number, rounds: number): RoundPlan {
  const count = Math.max(1, Math.min(rounds, operations));
  return { operations: split(operations, count), floorRoundTrips: split(floorRoundTrips, count) };
}

/** What one round measures: the bare transport, then the protocol. */
export interface RoundSteps<F, P> {
  floor(roundTrips: number, round: number): Promise<F>;
  probe(operations: number, round: number): Promise<P>;
}

export interface RoundOptions {
  /**
   * Test-only: every round's floor first, then every round's probe (the method this replaced).
   * Round k still pairs floor k with probe k, but they were taken seconds apart.
   */
  readonly mutantBlocks?: boolean;
}

/** Runs the plan: floor k then probe k, round after round. Results come back in round order. */
export async function runRounds<F, P>(plan: RoundPlan, steps: RoundSteps<F, P>, options: RoundOptions = {}): Promise<{ floors: F[]; probes: P[] }> {
  const floors: F[] = [];
  const probes: P[] = [];
  const count = plan.operations.length;
  if (options.mutantBlocks) {
    for (let k = 0; k < count; k++) floors.push(await steps.floor(plan.floorRoundTrips[k]!, k));
    for (let k = 0; k < count; k++) probes.push(await steps.probe(plan.operations[k]!, k));
    return { floors, probes };
  }
  for (let k = 0; k < count; k++) {
    floors.push(await steps.floor(plan.floorRoundTrips[k]!, k));
    probes.push(await steps.probe(plan.operations[k]!, k));
  }
  return { floors, probes };
}

/** The median and extremes of per-round ratios. */
export interface RoundSpread {
  /** The figure to judge: half the rounds were at or below it. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

const hundredths = (x: number) => Math.round(x * 100) / 100;

/** Median (the mean of the middle two for an even count), min and max, to 0.01; zeros for no rounds. */
export function spreadOf(ratios: readonly number[]): RoundSpread {
  if (ratios.length === 0) return { median: 0, min: 0, max: 0 };
  const sorted = [...ratios].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median: hundredths(median), min: hundredths(sorted[0]!), max: hundredths(sorted[sorted.length - 1]!) };
}

export interface LatencyPair {
  readonly p50: number;
  readonly mean: number;
}

/** One round's latency against that round's floor. */
export interface RoundPhase {
  readonly latency: LatencyPair;
  readonly rtt: LatencyPair;
}

/** Each round's p50 over roundTrips × its floor's median, and mean over roundTrips × its floor's mean. */
export function roundRatios(rounds: readonly RoundPhase[], roundTrips: number): { roundRatioP50: RoundSpread; roundRatioMean: RoundSpread } {
  const ratios = (pick: (p: LatencyPair) => number) => rounds.flatMap((r) => (roundTrips * pick(r.rtt) > 0 ? [pick(r.latency) / (roundTrips * pick(r.rtt))] : []));
  return { roundRatioP50: spreadOf(ratios((p) => p.p50)), roundRatioMean: spreadOf(ratios((p) => p.mean)) };
}

/**
 * Acquire and release latencies of a history, from each operation's invoke to its ok: the values
 * the clients put in their own histograms (same clock), kept per run so that rounds can be pooled.
 */
export function latencyStatsOf(history: readonly HistoryEvent[]): RunStats {
  const stats = new RunStats();
  const open = new Map<string, number>();
  for (const e of history) {
    const key = `${e.client}\u0000${e.op}`;
    if (e.phase === 'invoke') {
      open.set(key, e.timeNs);
      continue;
    }
    const start = open.get(key);
    open.delete(key);
    if (start === undefined || e.phase !== 'ok') continue;
    if (e.op === 'acquire') stats.recordAcquire(e.timeNs - start);
    else stats.recordRelease(e.timeNs - start);
  }
  return stats;
}
