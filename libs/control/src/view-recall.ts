import { errorMessage } from '@lockfabric/ports';
import { MemberState as WireMemberState, MembershipViewSchema, decodeWire } from '@lockfabric/wire';
import type { ControlBus, Unsubscribe } from './bus.js';
import { ControlNoRespondersError, ControlRequestTimeoutError } from './errors.js';
import type { MemberState } from './failure-detector.js';
import type { Logger, MalformedSink } from './logger.js';
import type { RecalledView } from './membership.js';
import type { Subjects } from './subjects.js';

/**
 * A coordinator keeps nothing across a restart, and NATS core keeps no message: the newest view
 * lives on only in the participants that follow `ctl.membership`. So a starting coordinator asks
 * them for it (`ctl.membership.recall`, request/reply) and each participant that holds a view
 * answers with its bytes as it received them. One answer is taken (the bus returns the first);
 * every participant follows the same views, re-announced every second, so they agree but for a
 * view in flight.
 */

/** A participant answers recalls with the newest view it holds; none yet, no answer. */
export function answerViewRecalls(bus: ControlBus, subjects: Subjects, newest: () => Uint8Array | undefined): Unsubscribe {
  return bus.subscribe(subjects.membershipRecall(), (msg) => {
    const view = newest();
    if (view && msg.respond) msg.respond(view);
  });
}

export interface ViewRecallDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
  /** How long to wait for an answer: the warm-up, after which the coordinator speaks anyway. */
  readonly timeoutMs: number;
}

const STATES: Partial<Record<WireMemberState, MemberState>> = { [WireMemberState.ALIVE]: 'alive', [WireMemberState.SUSPECT]: 'suspect', [WireMemberState.DEAD]: 'dead' };

/**
 * The newest view a participant holds, or undefined when nobody holds one (a cluster starting for
 * the first time), nobody answered in time, or the answer did not decode (counted as malformed).
 */
export async function recallView(deps: ViewRecallDeps): Promise<RecalledView | undefined> {
  const subject = deps.subjects.membershipRecall();
  let data: Uint8Array;
  try {
    data = await deps.bus.request(subject, new Uint8Array(0), { timeoutMs: deps.timeoutMs });
  } catch (error) {
    const unanswered = error instanceof ControlNoRespondersError || error instanceof ControlRequestTimeoutError;
    deps.logger[unanswered ? 'info' : 'warn'](`coordinator: no membership view recalled (${errorMessage(error)}); watching only members heard from now on`);
    return undefined;
  }
  try {
    const view = decodeWire(MembershipViewSchema, data, subject);
    const members = view.members.map((m) => ({ role: m.role, id: m.id, node: m.node, incarnation: m.incarnation, state: STATES[m.state] ?? 'alive' }));
    return { epoch: view.epoch, members };
  } catch (decodeError) {
    deps.malformed.record(subject, decodeError);
    return undefined;
  }
}
