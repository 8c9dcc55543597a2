import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { followFences } from '@lockfabric/live';
import type { Fence, Logger, MalformedInputCounter, Subjects } from '@lockfabric/live';
import type { Clock, NodeId } from '@lockfabric/ports';
import { RecoveryPhaseSchema, ResetOrderSchema, decodeWire } from '@lockfabric/wire';
import type { MemoryNodeExecutor } from './memory-executor.js';
import { recoverTable } from './table-recovery.js';
import type { TableBinding, TableRecoveryResult } from './table-recovery.js';
import { errorMessage } from '@lockfabric/ports';

export interface RecoveryWatchDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly node: NodeId;
  readonly executor: MemoryNodeExecutor;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly malformed: MalformedInputCounter;
  /** Called first on each fence, before the table is recovered and the recovery reported: the lock managers on this node's CPU drop the dead node's holds. */
  readonly onFence?: (fence: Fence) => void;
}

export interface RecoveryWatch {
  readonly binding: () => TableBinding | undefined;
  readonly recoveries: () => readonly TableRecoveryResult[];
  stop(): void;
}

/**
 * The memory node's part of compute-node recovery (README of apps/coordinator, "Recovery per
 * protocol"): on a view or failure notice that declares a compute node dead it first fences the
 * node (its verbs now complete `bad-rkey`, "fenced: …"), then has the lock managers on its CPU
 * (`onFence`: rpc, traditional) drop the dead node's holds and queued requests, then clears the
 * dead node's holds in the lock table for the protocol the table serves, then reports on
 * `ctl.recovery.phase`. Which
 * protocol the table serves comes from the last `ctl.recovery.table` (a ResetOrder naming the
 * protocol and lock range, published by whoever initialised the table for a run).
 */
export function startRecoveryWatch(deps: RecoveryWatchDeps): RecoveryWatch {
  const { nc, subjects, executor, logger } = deps;
  const lockRegion = executor.memory.regions().find((r) => r.region === 0);
  const maxSlots = lockRegion ? Math.floor(lockRegion.sizeBytes / 8) : 0;
  let binding: TableBinding | undefined;
  const results: TableRecoveryResult[] = [];
  const tableSubject = subjects.recovery('table');
  const phaseSubject = subjects.recovery('phase');

  const recover = (fence: Fence) => {
    deps.onFence?.(fence);
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
      logger.warn(`memory node ${deps.node}: could not report the recovery of node ${fence.node}: ${errorMessage(error)}`);
    }
  };

  // Views and failure notices fence the dead node (shared with compute nodes: @lockfabric/live fence-feed).
  const fenceFeed = followFences({ nc, subjects, fences: executor.fences, malformed: deps.malformed, logger, onFence: recover });
  const subscriptions: Subscription[] = [
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
      fenceFeed.stop();
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}
