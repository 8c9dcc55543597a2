import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { REPLIES_MAX, ServerLockClient } from '../src/index.js';

const SELF = 3;

/** A client over a switch port the test feeds by hand; nothing it sends goes anywhere. */
function client() {
  const handlers: ((packet: LockPacket) => void)[] = [];
  const port: SwitchPort = { machine: 2, send: () => undefined, onPacket: (h) => (handlers.push(h), () => undefined) };
  const ports = { self: { node: 2, client: SELF }, switchPort: port } as unknown as ClientPorts;
  const c = new ServerLockClient(ports, { protocol: 'srvlock', retransmitNs: 1_000, retransmitAcquire: true, maxAttempts: 3, pushBackNs: 0, route: () => ({ kind: 'packet', dst: 1 }) });
  return { c, deliver: (p: LockPacket) => handlers.forEach((h) => h(p)) };
}

describe('ServerLockClient: replies nobody collects stay bounded', () => {
  it('late ACKs of finished requests never hold more than REPLIES_MAX entries', () => {
    const { c, deliver } = client();
    const stray: LockPacket = { type: 'ack', lock: 7, machine: 2, task: SELF, mode: 'exclusive', incarnation: 0, seq: 0, flags: 0 };
    for (let seq = 1; seq <= 3 * REPLIES_MAX; seq++) deliver({ ...stray, seq });
    expect(c.traffic.packetsReceived).toBe(3 * REPLIES_MAX);
    expect(c.uncollectedReplies).toBe(REPLIES_MAX);
  });

  it('a packet for another task is not kept at all', () => {
    const { c, deliver } = client();
    deliver({ type: 'ack', lock: 7, machine: 2, task: SELF + 1, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0 });
    expect(c.uncollectedReplies).toBe(0);
  });
});
