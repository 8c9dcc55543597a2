import { HOTSPOT_DEFAULTS, HOTSPOT_DEFAULT_LOCKS, validateHotspot } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import type { FlagReader, Options } from '../cli/args.js';

/** Flags of FissLock's dynamic workload (`--workload dynamic`). */
export const DYNAMIC_FLAGS: Options = {
  'hot-locks': { type: 'string' },
  'hot-share': { type: 'string' },
  'move-every-ms': { type: 'string' },
};

/** Four moves of the hotspot when the user bounds the run by neither time nor operations. */
const DEFAULT_PERIODS = 4;

/**
 * For `--workload dynamic`: the micro spec with a moving hotspot (FissLock §7.5: 1 M locks, 2 500
 * hot, half the requests, moving every 300 ms) and the tick of the throughput timeline. For any
 * other workload: the spec unchanged, with a problem for each dynamic flag given.
 */
export function readDynamicWorkload(values: Record<string, unknown>, reader: FlagReader, spec: WorkloadSpec): { spec: WorkloadSpec; tickMs?: number } {
  const given = (flag: string) => values[flag] !== undefined;
  if (values['workload'] !== 'dynamic') {
    for (const flag of Object.keys(DYNAMIC_FLAGS)) if (given(flag)) reader.problems.push(`--${flag} applies to --workload dynamic`);
    return { spec };
  }
  for (const flag of ['distribution', 'lock-ids']) if (given(flag)) reader.problems.push(`--${flag} does not apply to --workload dynamic; its hotspot picks the locks`);
  const hotspot = {
    hotLocks: reader.number('hot-locks', HOTSPOT_DEFAULTS.hotLocks, { integer: true, min: 1 }),
    hotShare: reader.number('hot-share', HOTSPOT_DEFAULTS.hotShare, { min: 0, max: 1 }),
    moveEveryMs: reader.number('move-every-ms', HOTSPOT_DEFAULTS.moveEveryMs, { min: 0.001 }),
  };
  // the timeline's tick when --tick-ms is not given (bench reads that flag for every workload)
  const tickMs = hotspot.moveEveryMs / 6;
  const locks = given('locks') ? spec.locks : HOTSPOT_DEFAULT_LOCKS;
  const problems = validateHotspot(hotspot, locks);
  reader.problems.push(...problems.map((p) => `--workload dynamic: ${p}`));
  const bounded = given('duration-ms') || given('operations');
  const { operations: _defaultOps, ...rest } = spec;
  const length = bounded ? spec : { ...rest, durationMs: DEFAULT_PERIODS * hotspot.moveEveryMs };
  return { spec: { ...length, locks, hotspot }, tickMs };
}
