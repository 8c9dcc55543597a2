import { create } from '@bufbuild/protobuf';
import { MemberSchema, MemberState as WireMemberState, MembershipViewSchema } from '@lockfabric/wire';
import type { MembershipView as WireMembershipView } from '@lockfabric/wire';
import type { MemberState } from './failure-detector.js';
import type { MembershipView } from './membership.js';

const WIRE_STATES: Record<MemberState, WireMemberState> = {
  alive: WireMemberState.ALIVE,
  suspect: WireMemberState.SUSPECT,
  dead: WireMemberState.DEAD,
};

/**
 * The protobuf MembershipView. Times are the coordinator's clock: a member's heartbeat age is
 * `time_ns - last_heartbeat_ns`. Members are ordered by role, then id, so equal views encode equally.
 */
export function membershipViewToWire(view: MembershipView): WireMembershipView {
  const members = [...view.members].sort((a, b) => (a.role === b.role ? compare(a.id, b.id) : compare(a.role, b.role)));
  return create(MembershipViewSchema, {
    epoch: view.epoch,
    timeNs: BigInt(Math.round(view.timeNs)),
    members: members.map((m) =>
      create(MemberSchema, { role: m.role, id: m.id, node: m.node, incarnation: m.incarnation, state: WIRE_STATES[m.state], lastHeartbeatNs: BigInt(Math.round(m.lastHeartbeatNs)) }),
    ),
  });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
