import { LOCK_ATTR } from '@lockfabric/locks-common';
import type { LockId, NodeId, SpanContextRef, Trace } from '@lockfabric/ports';
import { clientOfTask } from '../wire.js';
import type { Waiter } from './agent.js';

/** The holder whose release empties the holders: named on the handover span, which links to its acquire span. */
export interface Releaser {
  readonly from: string;
  readonly acquire?: SpanContextRef | undefined;
}

/**
 * ⑧ on the releasing machine: a `lock.handover` span linked to the releasing holder's acquire
 * span; its context rides in the transfer GRANT (`LockPacket.trace`), and the next holder's
 * acquire links to it. A refused transfer that is retried records another span.
 */
export function startHandoverSpan(trace: Trace | undefined, machine: NodeId, lid: LockId, next: Waiter, releaser?: Releaser): SpanContextRef | undefined {
  if (!trace) return undefined;
  const span = trace.startSpan('lock.handover', {
    attributes: {
      [LOCK_ATTR.protocol]: 'fisslock',
      [LOCK_ATTR.lock]: lid,
      [LOCK_ATTR.mode]: next.mode,
      'lockfabric.handover.from': releaser?.from ?? `${machine}`,
      'lockfabric.handover.to': `${next.mid}/${clientOfTask(next.task)}`,
      'lockfabric.fisslock.agent_from': machine,
      'lockfabric.fisslock.agent_to': next.mid,
    },
  });
  if (releaser?.acquire) span.addLink(releaser.acquire, { 'lockfabric.link.role': 'previous-holder' });
  span.end();
  return span.context;
}
