// Shared pieces of the live FissLock recovery tests (not a test file itself): the coordinator's
// FissLock recovery steps as its Status reports them, and holds that spanned an outage.
import { create } from '@bufbuild/protobuf';
import type { HistoryEvent } from '@lockfabric/check';
import { parseRecoveryDetail } from '@lockfabric/coordinator/service';
import { UnaryClient } from '@lockfabric/live';
import { CoordinatorService, RecoveryStage, StatusRequestSchema } from '@lockfabric/wire';
import type { RecoveryPhase } from '@lockfabric/wire';
import type { ProcessRecord } from '@lockfabric/workload-driver';

export async function fissPhases(coordinator: ProcessRecord): Promise<RecoveryPhase[]> {
  const client = new UnaryClient(`127.0.0.1:${coordinator.grpc}`, 5_000);
  try {
    const status = await client.call(CoordinatorService.method.status, create(StatusRequestSchema));
    return status.recoveries.filter((p) => p.protocol === 'fisslock');
  } finally {
    client.close();
  }
}

export function stepsOf(phases: readonly RecoveryPhase[], member: string): RecoveryPhase[] {
  return phases.filter((p) => p.stage !== RecoveryStage.UNSPECIFIED && parseRecoveryDetail(p.detail)['member'] === member);
}

/** `key=value` words of a step's own detail (after `action=`): `held=3 woken=0 aborted=0`. */
export function actionWords(phase: RecoveryPhase): Record<string, number> {
  const words = (parseRecoveryDetail(phase.detail)['action'] ?? '').split(' ');
  return Object.fromEntries(words.map((w) => w.split('=')).filter((kv) => kv.length === 2).map(([k, v]) => [k, Number(v)]));
}

/** Holds granted before `beforeNs` and released (ok) after `afterNs`, per client: they spanned the outage. */
export function holdsAcross(history: readonly HistoryEvent[], beforeNs: number, afterNs: number): number {
  const grantedAt = new Map<string, number>();
  let spanning = 0;
  for (const e of history) {
    const key = `${e.client}#${e.lock}`;
    if (e.op === 'acquire' && e.phase === 'ok') grantedAt.set(key, e.timeNs);
    if (e.op === 'release' && e.phase === 'ok') {
      const at = grantedAt.get(key);
      if (at !== undefined && at < beforeNs && e.timeNs > afterNs) spanning++;
      grantedAt.delete(key);
    }
  }
  return spanning;
}
