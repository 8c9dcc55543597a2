import { HistoryRecorder } from '@lockfabric/check';
import type { FaultReport, FaultWindow } from '../../src/model.js';
import { timelineFromHistory } from '../../src/timeline.js';
import { lcg32 } from '@lockfabric/random';

const MS = 1e6;
const RUN_START_NS = 5_000 * MS; // histories rarely start at zero

/** Faults of the sample run: a partition, a kill with measured recovery, and a pause left open. */
export const SAMPLE_FAULTS: readonly FaultWindow[] = [
  { id: 'f1', kind: 'partition', target: 'compute-2', startNs: RUN_START_NS + 3_000 * MS, endNs: RUN_START_NS + 5_000 * MS, recoveryMs: 420 },
  { id: 'f2', kind: 'kill', target: 'memory-0', startNs: RUN_START_NS + 6_500 * MS, endNs: RUN_START_NS + 7_000 * MS, recoveryMs: 800, note: 'SIGKILL, restarted by the launcher' },
  { id: 'f3', kind: 'pause', target: 'compute-1', startNs: RUN_START_NS + 8_500 * MS },
];

const inFault = (timeNs: number): boolean => SAMPLE_FAULTS.some((f) => timeNs >= f.startNs && timeNs < (f.endNs ?? Infinity));

/**
 * A deterministic 10 s history of 8 clients on 4 locks: acquires take 1-3 ms, inside a fault
 * window 15-40 ms and every fifth of them fails.
 */
export function sampleHistory(): HistoryRecorder {
  const h = new HistoryRecorder();
  const next = lcg32(7, 'ansiC');
  for (let c = 0; c < 8; c++) {
    const client = `${c % 2}/${c}`;
    let t = RUN_START_NS + next() * MS;
    let n = 0;
    while (t < RUN_START_NS + 10_000 * MS) {
      const lock = (c + n++) % 4;
      h.invoke(client, 'acquire', lock, 'exclusive', t);
      const faulty = inFault(t);
      t += (faulty ? 15 + 25 * next() : 1 + 2 * next()) * MS;
      if (faulty && n % 5 === 0) {
        h.fail(client, 'acquire', lock, 'exclusive', t, n % 2 ? 'LockTimeoutError' : 'NodeUnreachableError');
      } else {
        h.ok(client, 'acquire', lock, 'exclusive', t);
        h.invoke(client, 'release', lock, 'exclusive', t + 0.1 * MS);
        h.ok(client, 'release', lock, 'exclusive', t + 0.2 * MS);
      }
      t += 0.5 * MS;
    }
  }
  return h;
}

/** The sample run as a report; `overrides` replace any field (e.g. hostile strings for escaping tests). */
export function sampleReport(overrides: Partial<FaultReport> = {}): FaultReport {
  const timeline = timelineFromHistory(sampleHistory(), { bucketMs: 250, startNs: RUN_START_NS, endNs: RUN_START_NS + 10_000 * MS });
  const failuresByCode: Record<string, number> = {};
  for (const b of timeline.buckets) for (const [code, n] of Object.entries(b.failedByCode)) failuresByCode[code] = (failuresByCode[code] ?? 0) + n;
  return {
    title: 'caslock under faults, seed 7',
    protocol: 'caslock',
    substrate: 'live',
    seed: 7,
    ...timeline,
    faults: SAMPLE_FAULTS,
    verdict: { safety: 'ok', liveness: 'violation', exitCode: 3, lines: ['exclusion: 0 violations', 'liveness: 1 acquire never completed (0/3 on lock 2)'] },
    unknownOps: 2,
    failuresByCode,
    command: 'npx lockfabric chaos run --protocol caslock --seed 7',
    ...overrides,
  };
}
