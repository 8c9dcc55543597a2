import { SeededRandom } from '@lockfabric/sim';

/** Every fault `lockfabric nemesis` can inject, by the name `--faults` takes. */
export const NEMESIS_FAULTS = [
  'kill',
  'pause',
  'partition',
  'restart',
  'memory-restart',
  'switch-restart',
  'coordinator-kill',
  'nats-restart',
  'switch-loss',
  'switch-dup',
  'switch-reorder',
  'switch-delay',
] as const;
export type NemesisFault = (typeof NEMESIS_FAULTS)[number];

/** Faults aimed at a compute node; the others have a fixed target (the memory node, switch, …). */
export const COMPUTE_FAULTS: ReadonlySet<NemesisFault> = new Set(['kill', 'pause', 'partition', 'restart']);
/** Faults that need a switch-dataplane in the cluster. */
export const SWITCH_FAULTS: ReadonlySet<NemesisFault> = new Set(['switch-restart', 'switch-loss', 'switch-dup', 'switch-reorder', 'switch-delay']);

/** One fault of a schedule: what, on whom, when (ms after the run starts) and for how long. */
export interface PlannedFault {
  readonly id: string;
  readonly kind: NemesisFault;
  readonly target: string;
  readonly atMs: number;
  readonly durationMs: number;
}

export interface ScheduleOptions {
  readonly seed: number;
  readonly faults: readonly NemesisFault[];
  /** The run's length; the last fault heals before `durationMs - quietMs`. */
  readonly durationMs: number;
  /** Mean gap between one fault's heal and the next fault (drawn in [0.5, 1.5] × this). */
  readonly intervalMs: number;
  /** Mean fault length (drawn in [0.5, 1.5] × this). */
  readonly faultDurationMs: number;
  /** Fault-free time at the start (a baseline for recovery) and at the end. */
  readonly quietMs: number;
  /** Targets by role, from the cluster: compute nodes first-to-last, and the single processes. */
  readonly targets: { readonly compute: readonly string[]; readonly memory?: string; readonly switch?: string; readonly coordinator?: string; readonly nats?: string };
}

/**
 * The fault schedule of one seed: faults one after another (never two at once, so every recovery
 * is attributable), each kind and target drawn from the seed. The same seed and options give the
 * same schedule.
 */
export function planSchedule(options: ScheduleOptions): PlannedFault[] {
  const random = new SeededRandom(options.seed);
  const spread = (mean: number) => Math.round(mean * (0.5 + random.next()));
  const plan: PlannedFault[] = [];
  let at = options.quietMs;
  const end = options.durationMs - options.quietMs;
  // A killed compute node rejoins the cluster but not the running workload (its clients died with
  // it): later faults on it would test nothing, so it leaves the pool of targets.
  const computes = [...options.targets.compute];
  for (;;) {
    const kinds = computes.length > 0 ? options.faults : options.faults.filter((f) => !COMPUTE_FAULTS.has(f));
    if (kinds.length === 0) break;
    const kind = kinds[random.int(kinds.length)]!;
    const durationMs = spread(options.faultDurationMs);
    if (at + durationMs > end) break;
    const target = COMPUTE_FAULTS.has(kind) ? computes[random.int(computes.length)]! : targetOf(kind, options.targets);
    if (kind === 'kill' || kind === 'restart') computes.splice(computes.indexOf(target), 1);
    plan.push({ id: `f${plan.length + 1}`, kind, target, atMs: at, durationMs });
    at += durationMs + spread(options.intervalMs);
  }
  return plan;
}

function targetOf(kind: NemesisFault, targets: ScheduleOptions['targets']): string {
  if (kind === 'memory-restart') return targets.memory ?? 'memory';
  if (kind === 'coordinator-kill') return targets.coordinator ?? 'coordinator';
  if (kind === 'nats-restart') return targets.nats ?? 'nats';
  return targets.switch ?? 'switch';
}

/** Parses `--faults`: a comma-separated list of NEMESIS_FAULTS; problems are collected, not thrown. */
export function parseFaults(raw: string, problems: string[]): NemesisFault[] {
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (names.length === 0) problems.push(`--faults: expected one or more of ${NEMESIS_FAULTS.join(', ')}`);
  const faults: NemesisFault[] = [];
  for (const name of names) {
    if ((NEMESIS_FAULTS as readonly string[]).includes(name)) faults.push(name as NemesisFault);
    else problems.push(`--faults: unknown fault ${JSON.stringify(name)} (known: ${NEMESIS_FAULTS.join(', ')})`);
  }
  return faults;
}
