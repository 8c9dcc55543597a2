import type { NodeServiceContext } from '@lockfabric/locks-common';
import { MalformedInputError, errorMessage } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import { FailureNoticeSchema, MemberState, MembershipViewSchema, decodeWire } from '@lockfabric/wire';
import type { MembershipView } from '@lockfabric/wire';
import type { ControlBus } from './bus.js';
import type { Logger, MalformedSink } from './logger.js';
import type { Subjects } from './subjects.js';
import { answerViewRecalls } from './view-recall.js';

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
 * The compute node's feed of compute-node deaths for its node services (lock servers), live over
 * NATS and in sim over the in-memory bus. Every FailureNotice (`ctl.recovery.failure`) that
 * declares a compute node dead reaches each listener (a repeated notice again: listeners
 * deduplicate). Membership views (`ctl.membership`) count too, by the rule memory nodes fence by
 * (libs/live fence-table.ts): a compute node a view listed alive that a newer view lists dead, or
 * no longer lists at all, is dead. The second case is a coordinator that crashed before it sent
 * the notice and restarted without ever hearing the node: its first view, after the warm-up,
 * leaves the silent node out, and no notice of it will ever come.
 * The feed also keeps the newest view's bytes and hands them to a starting coordinator that asks
 * (view-recall.ts), so that it watches the members its predecessor published.
 * Notices of other roles are ignored; bytes that do not decode are counted as malformed.
 * Listeners added later hear only later deaths: a run's lock server starts empty.
 */
export function startFailureFeed(deps: FailureFeedDeps): FailureFeed {
  const listeners = new Set<(node: NodeId) => void>();
  const declared: NodeId[] = [];
  const subject = deps.subjects.recovery('failure');
  const tell = (node: NodeId, why: string): void => {
    if (node === deps.node) return;
    if (!declared.includes(node)) declared.push(node);
    deps.logger.warn(`compute node ${deps.node}: compute node ${node} declared dead (${why}); lock servers drop its holds`);
    for (const listener of [...listeners]) {
      try {
        listener(node);
      } catch (listenerError) {
        deps.logger.warn(`compute node ${deps.node}: failure listener threw: ${errorMessage(listenerError)}`);
      }
    }
  };
  const viewSubject = deps.subjects.membership();
  let viewEpoch = -1n;
  /** Compute nodes (with their incarnation) the newest view listed alive or suspect. */
  let live = new Map<NodeId, bigint>();
  let newestView: Uint8Array | undefined;
  const offViews = deps.bus.subscribe(viewSubject, (msg) => {
    let view: MembershipView;
    try {
      view = decodeWire(MembershipViewSchema, msg.data, viewSubject);
    } catch (decodeError) {
      deps.malformed.record(viewSubject, decodeError);
      return;
    }
    if (view.epoch <= viewEpoch) return;
    viewEpoch = view.epoch;
    newestView = msg.data.slice();
    const compute = view.members.filter((m) => m.role === 'compute' && m.node > 0);
    const next = new Map(compute.filter((m) => m.state !== MemberState.DEAD).map((m) => [m.node, m.incarnation] as const));
    for (const [node, incarnation] of live) {
      if (next.has(node)) continue;
      const listed = compute.find((m) => m.node === node && m.incarnation === incarnation);
      if (listed || !compute.some((m) => m.node === node)) tell(node, `the view of epoch ${view.epoch} ${listed ? 'lists it dead' : 'no longer lists it'}`);
    }
    live = next;
  });
  const offRecalls = answerViewRecalls(deps.bus, deps.subjects, () => newestView);
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
    tell(node, 'failure notice');
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
      offViews();
      offRecalls();
    },
  };
}
