import { summarizeVerdict } from '@lockfabric/check';
import { protocolById } from '@lockfabric/lock-catalog';
import { PhaseTiming, VerbAccounting, phaseCoverageGapNs } from '@lockfabric/workloads';
import type { PhaseKey, TimedOperation, WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';

// ShiftLock Tables 3–4: protocols mark phase boundaries, the harness times them. Every nanosecond
// of every operation must land in exactly one named phase, and each protocol shows the phases its
// paper describes.
const contended: WorkloadSpec = { clients: 8, locks: 4, readRatio: 0.5, distribution: { zipf: 0.99 }, operations: 600, thinkNs: 0, criticalSectionNs: 500, seed: 3 };
const alone: WorkloadSpec = { ...contended, clients: 1, locks: 1, operations: 20, criticalSectionNs: 0 };

const phasesOf = (accounting: VerbAccounting, kind: TimedOperation): PhaseKey[] => Object.keys(accounting.phases.totals[kind].ns).sort() as PhaseKey[];

/** Phases each protocol must show under contention, per operation kind (the paper's columns). */
const EXPECTED: Record<string, { opts?: Record<string, string>; contended: Partial<Record<TimedOperation, PhaseKey[]>> }> = {
  shiftlock: { contended: { 'acquire-exclusive': ['initial-atomic', 'notify-predecessor', 'wait-predecessor', 'wait-readers'], 'acquire-shared': ['initial-atomic', 'wait-writers'], release: ['initial-atomic', 'notify-successor'] } },
  mcs: { contended: { 'acquire-exclusive': ['initial-atomic', 'notify-predecessor', 'wait-predecessor'], release: ['initial-atomic', 'notify-successor'] } },
  'rma-rw': { contended: { 'acquire-exclusive': ['initial-atomic', 'notify-predecessor', 'wait-predecessor', 'wait-readers'], release: ['initial-atomic', 'notify-successor'] } },
  caslock: { opts: { backoff: 'true' }, contended: { 'acquire-exclusive': ['initial-atomic', 'retries'], release: ['initial-atomic'] } },
  dslr: { contended: { 'acquire-exclusive': ['initial-atomic', 'retries'], 'acquire-shared': ['initial-atomic', 'retries'], release: ['initial-atomic'] } },
};

describe('latency breakdown by phase (ShiftLock Tables 3–4) on sim', () => {
  for (const [id, expected] of Object.entries(EXPECTED)) {
    it(`${id}: phases cover every operation exactly and match the design`, async () => {
      const accounting = new VerbAccounting();
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById(id), spec: contended, accounting, ...(expected.opts ? { protocolOptions: expected.opts } : {}) });
      expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
      expect(phaseCoverageGapNs(result.history.events(), accounting.phases)).toEqual({ 'acquire-exclusive': 0, 'acquire-shared': 0, release: 0 });
      for (const [kind, phases] of Object.entries(expected.contended)) {
        // Nothing unmarked: the protocol names where each stretch of its time goes.
        expect(phasesOf(accounting, kind as TimedOperation), kind).toEqual(phases);
      }
    }, 60_000);
  }

  it('shiftlock uncontended: a writer spends its whole acquire in its one atomic, and so does a reader (ShiftLock §3)', async () => {
    for (const readRatio of [0, 1]) {
      const accounting = new VerbAccounting();
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById('shiftlock'), spec: { ...alone, readRatio }, accounting });
      const kind: TimedOperation = readRatio === 1 ? 'acquire-shared' : 'acquire-exclusive';
      expect(phasesOf(accounting, kind)).toEqual(['initial-atomic']);
      expect(accounting.phases.totals[kind].operations).toBe(alone.operations);
      expect(accounting.counts.acquire[readRatio === 1 ? 'masked-faa' : 'masked-cas']).toBe(alone.operations);
      // The release's look for a successor costs no time when nobody waits.
      expect(accounting.phases.totals.release.ns['notify-successor'] ?? 0).toBe(0);
      expect(result.verdict.ok).toBe(true);
    }
  }, 60_000);

  it('mutant: a timer that loses the last phase of each operation is caught by the coverage check', async () => {
    const accounting = new VerbAccounting(new PhaseTiming({ mutantLoseLastPhase: true }));
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('shiftlock'), spec: contended, accounting });
    const gap = phaseCoverageGapNs(result.history.events(), accounting.phases);
    expect(gap['acquire-exclusive']).toBeGreaterThan(0);
  }, 60_000);
});
