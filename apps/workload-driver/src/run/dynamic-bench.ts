import { HOTSPOT_DEFAULTS, HOTSPOT_DEFAULT_LOCKS, timelineOf, validateHotspot } from '@lockfabric/workloads';
import type { Timeline, WorkloadSpec } from '@lockfabric/workloads';
import { HistoryRecorder } from '@lockfabric/check';
import type { HistoryEvent } from '@lockfabric/check';
import type { FlagReader, Options } from '../cli/args.js';

/** Flags of FissLock's dynamic workload (`--workload dynamic`). */
export const DYNAMIC_FLAGS: Options = {
  'hot-locks': { type: 'string' },
  'hot-share': { type: 'string' },
  'move-every-ms': { type: 'string' },
  'tick-ms': { type: 'string' },
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
  const tickMs = reader.number('tick-ms', hotspot.moveEveryMs / 6, { min: 0.001 });
  const locks = given('locks') ? spec.locks : HOTSPOT_DEFAULT_LOCKS;
  const problems = validateHotspot(hotspot, locks);
  reader.problems.push(...problems.map((p) => `--workload dynamic: ${p}`));
  const bounded = given('duration-ms') || given('operations');
  const { operations: _defaultOps, ...rest } = spec;
  const length = bounded ? spec : { ...rest, durationMs: DEFAULT_PERIODS * hotspot.moveEveryMs };
  return { spec: { ...length, locks, hotspot }, tickMs };
}

/** Granted acquires per tick from the run's first event on. */
/** Granted acquires per tick from the run's first event on; the last, partial tick is left out. */
export function dynamicTimeline(history: HistoryRecorder | Iterable<HistoryEvent>, tickMs: number): Timeline {
  const events = history instanceof HistoryRecorder ? history.events() : [...history];
  const startNs = events.reduce((min, e) => Math.min(min, e.timeNs), Infinity);
  const grants = events.filter((e) => e.op === 'acquire' && e.phase === 'ok').map((e) => e.timeNs);
  const full = timelineOf(grants, Number.isFinite(startNs) ? startNs : 0, tickMs);
  return { tickMs, acquiresPerSec: full.acquiresPerSec.slice(0, Math.max(1, full.acquiresPerSec.length - 1)) };
}

export function describeTimeline(t: Timeline): string {
  const digits = t.tickMs >= 1 ? 0 : 3;
  const rows = t.acquiresPerSec.map((v, i) => `${(i * t.tickMs).toFixed(digits).padStart(9)} ms  ${Math.round(v).toLocaleString('en-US').padStart(12)} acquires/s`);
  return [`  timeline            granted acquires per ${t.tickMs} ms tick`, ...rows.map((r) => `    ${r}`)].join('\n');
}
