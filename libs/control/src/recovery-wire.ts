import { create } from '@bufbuild/protobuf';
import { FailureNoticeSchema, RecoveryPhaseSchema, RecoveryStage } from '@lockfabric/wire';
import type { FailureNotice, RecoveryPhase } from '@lockfabric/wire';
import type { Recovery, RecoveryAction } from './recovery-book.js';

/** The FailureNotice published on `ctl.recovery.failure` when a recovery begins. */
export function failureNoticeToWire(recovery: Recovery, reason: string): FailureNotice {
  return create(FailureNoticeSchema, {
    epoch: recovery.epoch,
    role: recovery.role,
    id: recovery.id,
    node: recovery.node,
    incarnation: recovery.incarnation,
    reason,
    timeNs: BigInt(Math.round(recovery.detectedAtNs)),
  });
}

/**
 * A recovery as Status reports it: one RecoveryPhase per protocol action, then one per step the
 * coordinator drove for it (FissLock S1/S2/S3: `stage` set, `took_ns` in `detail`). The wire message has one
 * time, so the timings travel in `detail` as `key=value` words (see `parseRecoveryDetail`):
 * member, incarnation, mechanism, detected_ns, due_ns (lease actions), done_ns (the action),
 * recovery_done_ns (the whole recovery) and, last, the action in words. `time_ns` is when the
 * action was done, or when the failure was detected while it is not.
 */
export function recoveryToWire(recovery: Recovery): RecoveryPhase[] {
  return recovery.actions.flatMap((action) => [actionToWire(recovery, action), ...stepsToWire(recovery, action)]);
}

const STAGES = { S1: RecoveryStage.S1, S2: RecoveryStage.S2, S3: RecoveryStage.S3 } as const;

/** Steps the coordinator drove (FissLock S1–S3): one phase each, `took_ns` and the step's own words in `detail`. */
function stepsToWire(recovery: Recovery, action: RecoveryAction): RecoveryPhase[] {
  return (action.steps ?? []).map((step) =>
    create(RecoveryPhaseSchema, {
      stage: STAGES[step.stage],
      epoch: recovery.epoch,
      protocol: action.protocol,
      detail: [`member=${recovery.role}/${recovery.id}`, `start_ns=${nsText(step.startNs)}`, `end_ns=${nsText(step.endNs)}`, `took_ns=${nsText(step.endNs - step.startNs)}`, `action=${step.detail}`].join(' '),
      done: true,
      node: recovery.node,
      timeNs: BigInt(Math.round(step.endNs)),
    }),
  );
}

function actionToWire(recovery: Recovery, action: RecoveryAction): RecoveryPhase {
  const words = [
    `member=${recovery.role}/${recovery.id}`,
    `incarnation=${recovery.incarnation}`,
    `mechanism=${action.mechanism}`,
    `detected_ns=${nsText(recovery.detectedAtNs)}`,
    ...(action.dueAtNs !== undefined ? [`due_ns=${nsText(action.dueAtNs)}`] : []),
    ...(action.doneAtNs !== undefined ? [`done_ns=${nsText(action.doneAtNs)}`] : []),
    ...(recovery.doneAtNs !== undefined ? [`recovery_done_ns=${nsText(recovery.doneAtNs)}`] : []),
    `action=${action.action}`,
  ];
  return create(RecoveryPhaseSchema, {
    stage: RecoveryStage.UNSPECIFIED,
    epoch: recovery.epoch,
    protocol: action.protocol,
    detail: words.join(' '),
    done: action.doneAtNs !== undefined,
    node: recovery.node,
    timeNs: BigInt(Math.round(action.doneAtNs ?? recovery.detectedAtNs)),
  });
}

/** The `key=value` words of a Status recovery detail; `action` takes the rest of the text. */
export function parseRecoveryDetail(detail: string): Record<string, string> {
  const out: Record<string, string> = {};
  const actionAt = detail.indexOf('action=');
  const head = actionAt >= 0 ? detail.slice(0, actionAt) : detail;
  for (const word of head.split(' ')) {
    const eq = word.indexOf('=');
    if (eq > 0) out[word.slice(0, eq)] = word.slice(eq + 1);
  }
  if (actionAt >= 0) out['action'] = detail.slice(actionAt + 'action='.length);
  return out;
}

/** Exactly the integer the wire's int64 times carry (a double's shortest decimal form may differ from it). */
function nsText(ns: number): string {
  return BigInt(Math.round(ns)).toString();
}
