import type { NodeServiceContext } from '@lockfabric/locks-common';
import { MalformedInputError } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import { FailureNoticeSchema, decodeWire } from '@lockfabric/wire';
import type { ControlBus } from './bus.js';
import type { Logger, MalformedSink } from './logger.js';
import type { Subjects } from './subjects.js';

export type ComputeFailures = NonNullable<NodeServiceContext['failures']>;

export interface FailureFeedDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  /** This node: a notice naming it is not passed on (a node does not recover from its own death). */
  readonly node: NodeId;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
}

export interface FailureFeed extends ComputeFailures {
  /** Compute nodes declared dead so far, in notice order (each once). */
  readonly declared: readonly NodeId[];
  close(): void;
}

/** The compute node of a notice: `node`, or the decimal `id` when `node` is unset; undefined if neither. */
function computeNodeOf(notice: { node: number; id: string }): NodeId | undefined {
  if (notice.node > 0) return notice.node;
  return /^\d+$/.test(notice.id) ? Number(notice.id) : undefined;
}

/**
 * The compute node's feed of FailureNotices (`ctl.recovery.failure`) for its node services (lock
 * servers), live over NATS and in sim over the in-memory bus: every notice that declares a compute node dead reaches each listener (a repeated notice
 * again: listeners deduplicate).
 * Notices of other roles are ignored; bytes that are not a FailureNotice are counted as malformed.
 * Listeners added later hear only later notices: a run's lock server starts empty.
 */
export function startFailureFeed(deps: FailureFeedDeps): FailureFeed {
  const listeners = new Set<(node: NodeId) => void>();
  const declared: NodeId[] = [];
  const subject = deps.subjects.recovery('failure');
  const unsubscribe = deps.bus.subscribe(subject, (msg) => {
    let node: NodeId | undefined;
    try {
      const notice = decodeWire(FailureNoticeSchema, msg.data, subject);
      if (notice.role !== 'compute') return;
      node = computeNodeOf(notice);
      if (node === undefined) throw new MalformedInputError(subject, `compute failure notice names no node (id ${JSON.stringify(notice.id)})`);
    } catch (decodeError) {
      deps.malformed.record(subject, decodeError);
      return;
    }
    if (node === deps.node) return;
    if (!declared.includes(node)) declared.push(node);
    deps.logger.warn(`compute node ${deps.node}: compute node ${node} declared dead; lock servers drop its holds`);
    for (const listener of [...listeners]) {
      try {
        listener(node);
      } catch (listenerError) {
        deps.logger.warn(`compute node ${deps.node}: failure listener threw: ${listenerError instanceof Error ? listenerError.message : String(listenerError)}`);
      }
    }
  });
  return {
    declared,
    onComputeNodeFailed(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      listeners.clear();
      unsubscribe();
    },
  };
}
