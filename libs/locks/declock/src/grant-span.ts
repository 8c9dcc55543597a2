import { LOCK_ATTR } from '@lockfabric/locks-common';
import type { LockId, LockMode, SpanContextRef, Trace } from '@lockfabric/ports';

/**
 * The next holder's side of a handover: a `lock.grant` span whose parent is the releaser's
 * `lock.handover` (its context came in the grant message), so one trace spans both compute nodes.
 */
export function recordGrantSpan(trace: Trace, handover: SpanContextRef, protocol: string, lock: LockId, mode: LockMode, client: string): void {
  trace
    .startSpan('lock.grant', {
      parent: handover,
      attributes: { [LOCK_ATTR.protocol]: protocol, [LOCK_ATTR.lock]: lock, [LOCK_ATTR.mode]: mode, [LOCK_ATTR.client]: client },
    })
    .end();
}
