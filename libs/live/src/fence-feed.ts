import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { FailureNoticeSchema, MemberState, MembershipViewSchema, decodeWire } from '@lockfabric/wire';
import type { Fence, FenceTable, ViewMember } from './fence-table.js';
import { consoleLogger, type Logger } from './logger.js';
import type { MalformedInputCounter } from './malformed-input.js';
import type { Subjects } from './subjects.js';
import { errorMessage } from '@lockfabric/ports';

export interface FenceFeedOptions {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly fences: FenceTable;
  readonly malformed: MalformedInputCounter;
  /** Called once per fence a view or notice adds (a memory node recovers the dead node's holds here). */
  readonly onFence?: (fence: Fence) => void;
  /** Where a throwing `onFence` is reported (the fence itself stays applied). */
  readonly logger?: Logger;
}

export interface FenceFeed {
  stop(): void;
}

const STATE: Record<number, ViewMember['state']> = { [MemberState.ALIVE]: 'alive', [MemberState.SUSPECT]: 'suspect', [MemberState.DEAD]: 'dead' };

/**
 * Feeds a FenceTable from the coordinator's views (`ctl.membership`) and failure notices
 * (`ctl.recovery.failure`): the same input for every node that serves memory, so memory nodes and
 * compute nodes fence a dead compute node alike. Undecodable input is counted and dropped.
 */
export function followFences(options: FenceFeedOptions): FenceFeed {
  const { nc, subjects, fences, malformed } = options;
  const logger = options.logger ?? consoleLogger;
  const onFence = (fence: Fence) => {
    try {
      options.onFence?.(fence);
    } catch (error) {
      logger.warn(`fence of compute node ${fence.node} (incarnation ${fence.incarnation}): listener failed: ${errorMessage(error)}`);
    }
  };
  const membershipSubject = subjects.membership();
  const failureSubject = subjects.recovery('failure');
  const subscriptions: Subscription[] = [
    nc.subscribe(membershipSubject, {
      callback: (error, msg) => {
        if (error) return;
        let added: Fence[];
        try {
          const view = decodeWire(MembershipViewSchema, msg.data, membershipSubject);
          const members = view.members.map((m) => ({ role: m.role, node: m.node, incarnation: m.incarnation, state: STATE[m.state] ?? 'alive' }));
          added = fences.applyView(view.epoch, members);
        } catch (decodeError) {
          malformed.record(membershipSubject, decodeError);
          return;
        }
        for (const fence of added) onFence(fence);
      },
    }),
    nc.subscribe(failureSubject, {
      callback: (error, msg) => {
        if (error) return;
        let added: Fence | undefined;
        try {
          const notice = decodeWire(FailureNoticeSchema, msg.data, failureSubject);
          added = fences.applyFailure(notice.role, notice.node, notice.incarnation, notice.epoch);
        } catch (decodeError) {
          malformed.record(failureSubject, decodeError);
          return;
        }
        if (added) onFence(added);
      },
    }),
  ];
  return {
    stop: () => {
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}
