import { FLAG_CANCEL, FLAG_SWITCH } from '@lockfabric/lock-srvlock';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { ACQUIRE_ONCE_BOUND, withAcquireOnce } from '../src/index.js';

/** A switch port that records what leaves and lets the test deliver packets to the client. */
function fakePort() {
  const sent: LockPacket[] = [];
  const handlers: ((packet: LockPacket) => void)[] = [];
  const port: SwitchPort = {
    machine: 2,
    send: (packet) => void sent.push(packet),
    onPacket: (handler) => {
      handlers.push(handler);
      return () => undefined;
    },
  };
  const deliver = (packet: LockPacket) => handlers.forEach((h) => h(packet));
  return { port, sent, deliver };
}

const SELF = 4;
const packet = (type: LockPacket['type'], seq: number, flags = 0, task = SELF): LockPacket => ({ type, lock: 9, machine: 2, task, mode: 'exclusive', incarnation: 0, seq, flags, dst: 1 });

function guarded() {
  const fake = fakePort();
  const stats = { suppressed: 0 };
  const ports = withAcquireOnce({ self: { node: 2, client: SELF }, switchPort: fake.port } as unknown as ClientPorts, stats);
  const received: LockPacket[] = [];
  ports.switchPort?.onPacket((p) => received.push(p));
  const send = (p: LockPacket) => ports.switchPort?.send(p);
  const acquiresSent = () => fake.sent.filter((p) => p.type === 'acquire').map((p) => p.seq);
  return { fake, stats, send, received, acquiresSent };
}

describe('withAcquireOnce: one switch-queue entry per request', () => {
  it('drops an ACQUIRE repeated while the request has no answer', () => {
    const g = guarded();
    g.send(packet('acquire', 1));
    g.send(packet('acquire', 1));
    g.send(packet('acquire', 1));
    expect(g.acquiresSent()).toEqual([1]);
    expect(g.stats.suppressed).toBe(2);
  });

  it('sends it again after a push-back (the full queue did not take it)', () => {
    const g = guarded();
    g.send(packet('acquire', 1));
    g.fake.deliver(packet('push-back', 1, FLAG_SWITCH));
    g.send(packet('acquire', 1));
    g.send(packet('acquire', 1));
    expect(g.acquiresSent()).toEqual([1, 1]);
    expect(g.received.map((p) => p.type)).toEqual(['push-back']);
  });

  it('a grant or a cancel ends the request; other requests and other clients pass', () => {
    const g = guarded();
    g.send(packet('acquire', 1));
    g.send(packet('acquire', 2));
    g.fake.deliver(packet('grant', 1, FLAG_SWITCH));
    g.send(packet('release', 2, FLAG_CANCEL));
    // Nothing the client does repeats these; the point is the guard holds no state for them.
    g.send(packet('acquire', 1));
    g.send(packet('acquire', 2));
    g.send(packet('acquire', 3, 0, SELF + 1));
    g.send(packet('acquire', 3, 0, SELF + 1));
    expect(g.acquiresSent()).toEqual([1, 2, 1, 2, 3, 3]);
    expect(g.fake.sent.filter((p) => p.type === 'release')).toHaveLength(1);
  });

  it('is bounded: past the bound the oldest request is forgotten', () => {
    const g = guarded();
    for (let seq = 1; seq <= ACQUIRE_ONCE_BOUND + 1; seq++) g.send(packet('acquire', seq));
    g.send(packet('acquire', 2));
    g.send(packet('acquire', 1));
    expect(g.acquiresSent().slice(ACQUIRE_ONCE_BOUND + 1)).toEqual([1]);
  });
});
