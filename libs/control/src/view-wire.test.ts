import { MemberState } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import type { MemberRecord } from './failure-detector.js';
import { membershipViewToWire } from './view-wire.js';

const member = (role: string, id: string, state: MemberRecord['state']): MemberRecord => ({
  role,
  id,
  node: 4,
  incarnation: 2n,
  state,
  lastHeartbeatNs: 1_500,
  lastSeq: 3n,
  ready: true,
  sinceNs: 0,
});

describe('membershipViewToWire', () => {
  it('orders members by role and id, maps states, and carries both times so the age can be read', () => {
    const wire = membershipViewToWire({ epoch: 42n, timeNs: 2_000, members: [member('memory', '2', 'dead'), member('compute', '9', 'suspect'), member('compute', '1', 'alive')] });
    expect(wire.epoch).toBe(42n);
    expect(wire.timeNs).toBe(2_000n);
    expect(wire.members.map((m) => [m.role, m.id, m.state])).toStrictEqual([
      ['compute', '1', MemberState.ALIVE],
      ['compute', '9', MemberState.SUSPECT],
      ['memory', '2', MemberState.DEAD],
    ]);
    expect(wire.timeNs - (wire.members[0]?.lastHeartbeatNs ?? 0n)).toBe(500n);
  });
});
