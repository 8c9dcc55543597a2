import { create } from '@bufbuild/protobuf';
import { PhaseTotalsSchema, ResetTotalsSchema } from '@lockfabric/wire';
import type { PhaseTotals as WirePhaseTotals, ResetTotals as WireResetTotals } from '@lockfabric/wire';
import type { PhaseKey, PhaseTiming, TimedOperation } from './phase-timing.js';

const KINDS: readonly TimedOperation[] = ['acquire-exclusive', 'acquire-shared', 'release'];

/** A node's phase and reset totals as its RunResult carries them to the driver (sums in whole ns). */
export function phaseTimingToWire(timing: PhaseTiming): { phaseTotals: Record<string, WirePhaseTotals>; resets: WireResetTotals } {
  const phaseTotals: Record<string, WirePhaseTotals> = {};
  for (const kind of KINDS) {
    const totals = timing.totals[kind];
    if (totals.operations === 0) continue;
    const ns = Object.fromEntries(Object.entries(totals.ns).map(([phase, n]) => [phase, BigInt(Math.round(n ?? 0))]));
    phaseTotals[kind] = create(PhaseTotalsSchema, { operations: BigInt(totals.operations), ns });
  }
  const r = timing.resets;
  const resets = create(ResetTotalsSchema, { count: BigInt(r.count), totalNs: BigInt(Math.round(r.totalNs)), maxNs: BigInt(Math.round(r.maxNs)), finishedElsewhere: BigInt(r.finishedElsewhere) });
  return { phaseTotals, resets };
}

/** Adds one node's totals into `timing` (the driver merges every node's into one breakdown). */
export function mergePhaseTimingFromWire(timing: PhaseTiming, phaseTotals: Readonly<Record<string, WirePhaseTotals>>, resets: WireResetTotals | undefined): void {
  for (const kind of KINDS) {
    const wire = phaseTotals[kind];
    if (!wire) continue;
    const totals = timing.totals[kind];
    totals.operations += Number(wire.operations);
    for (const [phase, n] of Object.entries(wire.ns)) totals.ns[phase as PhaseKey] = (totals.ns[phase as PhaseKey] ?? 0) + Number(n);
  }
  if (!resets) return;
  timing.resets.count += Number(resets.count);
  timing.resets.totalNs += Number(resets.totalNs);
  timing.resets.maxNs = Math.max(timing.resets.maxNs, Number(resets.maxNs));
  timing.resets.finishedElsewhere += Number(resets.finishedElsewhere);
}
