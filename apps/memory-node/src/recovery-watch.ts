import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger, MalformedInputCounter, Subjects } from '@lockfabric/live';
import type { Clock, NodeId } from '@lockfabric/ports';
import { FailureNoticeSchema, MemberState, MembershipViewSchema, RecoveryPhaseSchema, ResetOrderSchema, decodeWire } from '@lockfabric/wire';
import type { Fence, ViewMember } from './fence-table.js';
import type { MemoryNodeExecutor } from './memory-executor.js';
import { recoverTable } from './table-recovery.js';
import type { TableBinding, TableRecoveryResult } from './table-recovery.js';

export interface RecoveryWatchDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly node: NodeId;
  readonly executor: MemoryNodeExecutor;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly malformed: MalformedInputCounter;
}

export interface RecoveryWatch {
  readonly binding: () => TableBinding | undefined;
  readonly recoveries: () => readonly TableRecoveryResult[];
  stop(): void;
}

const STATE: Record<number, ViewMember['state']> = { [MemberState.ALIVE]: 'alive', [MemberState.SUSPECT]: 'suspect', [MemberState.DEAD]: 'dead' };

/**
 * The memory node's part of compute-node recovery (README of apps/coordinator, "Recovery per
 * protocol"): on a view or failure notice that declares a compute node dead it first fences the
 * node (its verbs now complete `bad-rkey`, "fenced: …"), then clears the dead node's holds in the
 * lock table for the protocol the table serves, then reports on `ctl.recovery.phase`. Which
 * protocol the table serves comes from the last `ctl.recovery.table` (a ResetOrder naming the
 * protocol and lock range, published by whoever initialised the table for a run).
 */
export function startRecoveryWatch(deps: RecoveryWatchDeps): RecoveryWatch {
  const { nc, subjects, executor, logger } = deps;
  const fences = executor.fences;
  const lockRegion = executor.memory.regions().find((r) => r.region === 0);
  const maxSlots = lockRegion ? Math.floor(lockRegion.sizeBytes / 8) : 0;
  let binding: TableBinding | undefined;
  const results: TableRecoveryResult[] = [];
  const membershipSubject = subjects.membership();
  const failureSubject = subjects.recovery('failure');
  const tableSubject = subjects.recovery('table');
  const phaseSubject = subjects.recovery('phase');

  const recover = (fence: Fence) => {
    const result = binding && lockRegion ? recoverTable(executor.nic, deps.node, lockRegion.rkey, binding, fence.node) : { protocol: binding?.protocol ?? '', scanned: 0, cleared: 0, supported: false };
    results.push(result);
    if (results.length > 64) results.shift();
    logger.warn(`memory node ${deps.node}: fenced compute node ${fence.node} (incarnation ${fence.incarnation}, epoch ${fence.epoch}); ${result.supported ? `cleared ${result.cleared} of its ${result.protocol} holds` : `no table recovery for ${JSON.stringify(result.protocol)}`}`);
    try {
      const report = create(RecoveryPhaseSchema, {
        protocol: result.protocol,
        epoch: fence.epoch,
        node: fence.node,
        done: true,
        timeNs: BigInt(Math.round(deps.clock.nowNs())),
        detail: `memory=${deps.node} incarnation=${fence.incarnation} fenced=true supported=${result.supported} scanned=${result.scanned} cleared=${result.cleared}`,
      });
      nc.publish(phaseSubject, toBinary(RecoveryPhaseSchema, report));
    } catch (error) {
      logger.warn(`memory node ${deps.node}: could not report the recovery of node ${fence.node}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const subscriptions: Subscription[] = [
    nc.subscribe(membershipSubject, {
      callback: (error, msg) => {
        if (error) return;
        try {
          const view = decodeWire(MembershipViewSchema, msg.data, membershipSubject);
          const members = view.members.map((m) => ({ role: m.role, node: m.node, incarnation: m.incarnation, state: STATE[m.state] ?? 'alive' }));
          for (const fence of fences.applyView(view.epoch, members)) recover(fence);
        } catch (decodeError) {
          deps.malformed.record(membershipSubject, decodeError);
        }
      },
    }),
    nc.subscribe(failureSubject, {
      callback: (error, msg) => {
        if (error) return;
        try {
          const notice = decodeWire(FailureNoticeSchema, msg.data, failureSubject);
          const fence = fences.applyFailure(notice.role, notice.node, notice.incarnation, notice.epoch);
          if (fence) recover(fence);
        } catch (decodeError) {
          deps.malformed.record(failureSubject, decodeError);
        }
      },
    }),
    nc.subscribe(tableSubject, {
      callback: (error, msg) => {
        if (error) return;
        try {
          const order = decodeWire(ResetOrderSchema, msg.data, tableSubject);
          binding = { protocol: order.protocol, slots: Math.min(maxSlots, order.lockEnd), entryBytes: 8 };
          logger.info(`memory node ${deps.node}: lock table serves ${order.protocol} (locks ${order.lockBegin}..${order.lockEnd})`);
        } catch (decodeError) {
          deps.malformed.record(tableSubject, decodeError);
        }
      },
    }),
  ];

  return {
    binding: () => binding,
    recoveries: () => results,
    stop: () => {
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}
