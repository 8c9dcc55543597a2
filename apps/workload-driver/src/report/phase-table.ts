import { LOCK_PHASES } from '@lockfabric/ports';
import type { PhaseBreakdown, PhaseKey, TimedOperation } from '@lockfabric/workloads';

/** The paper's abbreviations (ShiftLock Table 2), so the table reads beside Tables 3 and 4. */
const SHORT: Record<PhaseKey, string> = {
  'initial-atomic': 'IA',
  retries: 'RT',
  'notify-predecessor': 'NP',
  'wait-predecessor': 'WP',
  'wait-readers': 'WR',
  'wait-writers': 'WW',
  'notify-successor': 'NS',
  unmarked: 'other',
};

const ROWS: readonly [TimedOperation, string][] = [
  ['acquire-exclusive', 'acquire (W)'],
  ['acquire-shared', 'acquire (R)'],
  ['release', 'release'],
];

/** One line per operation kind: mean µs per operation in each phase that occurred. */
export function describePhases(phases: PhaseBreakdown): string {
  const lines = ['  latency by phase    mean µs per operation (ShiftLock Table 2 names)'];
  for (const [kind, label] of ROWS) {
    const row = phases[kind];
    if (!row) continue;
    const cells = [...LOCK_PHASES, 'unmarked' as const]
      .filter((phase) => row.us[phase] !== undefined)
      .map((phase) => `${SHORT[phase]} ${(row.us[phase] ?? 0).toFixed(2)}`);
    lines.push(`    ${label.padEnd(16)}${cells.join('  ')}  (${row.operations} ops)`);
  }
  return lines.join('\n');
}
