import { FLAG_CANCEL, FLAG_SWITCH } from '@lockfabric/lock-srvlock';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';
import { createSwitchNet } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { NETLOCK_FLAG_RELEASED, RELIABLE_RELEASE_BOUND, netlockProgram, slotTag, withReliableRelease } from '../src/index.js';

const SELF = 4;
const US = 1_000;
const release = (seq: number, flags = 0, incarnation = slotTag(3, 7)): LockPacket => ({ type: 'release', lock: 9, machine: 2, task: SELF, mode: 'exclusive', incarnation, seq, flags, dst: 1 });
const ack = (seq: number): LockPacket => ({ ...release(seq), type: 'ack', flags: FLAG_SWITCH | NETLOCK_FLAG_RELEASED, dst: 2 });

/** The wrapper over a switch port that records what leaves (with the virtual time) and never answers unless told. */
function guarded(maxAttempts = 5) {
  const net = createSwitchNet({ seed: 1, computeNodes: [2], program: netlockProgram() });
  const sent: { atNs: number; packet: LockPacket }[] = [];
  const handlers: ((packet: LockPacket) => void)[] = [];
  const port: SwitchPort = { machine: 2, send: (packet) => void sent.push({ atNs: net.clock.nowNs(), packet }), onPacket: (h) => (handlers.push(h), () => undefined) };
  const stats = { resent: 0, acknowledged: 0, givenUp: 0 };
  const ports = withReliableRelease({ self: { node: 2, client: SELF }, switchPort: port, clock: net.clock } as unknown as ClientPorts, { retransmitNs: 10 * US, maxAttempts }, stats);
  const received: LockPacket[] = [];
  ports.switchPort?.onPacket((p) => received.push(p));
  return { net, sent, stats, received, send: (p: LockPacket) => ports.switchPort?.send(p), deliver: (p: LockPacket) => handlers.forEach((h) => h(p)) };
}

describe('withReliableRelease: a switch RELEASE is resent until acknowledged', () => {
  it('unanswered: sent maxAttempts times, the interval doubling, then given up', async () => {
    const g = guarded(5);
    g.send(release(1));
    await g.net.scheduler.run();
    expect(g.sent.map((s) => s.atNs / US)).toEqual([0, 10, 30, 70, 150]);
    expect(g.stats).toEqual({ resent: 4, acknowledged: 0, givenUp: 1 });
  });

  it('the ACK stops the resends and does not reach the client', async () => {
    const g = guarded(5);
    g.send(release(1));
    g.net.scheduler.at(15 * US, () => g.deliver(ack(1)));
    g.deliver(ack(99)); // not pending: consumed, nothing else happens
    await g.net.scheduler.run();
    expect(g.sent.map((s) => s.atNs / US)).toEqual([0, 10]);
    expect(g.stats).toMatchObject({ acknowledged: 1, givenUp: 0 });
    expect(g.received).toEqual([]);
  });

  it('a cancel, a release without a slot tag and other packets pass once; other acks reach the client', async () => {
    const g = guarded(5);
    g.send(release(1, FLAG_CANCEL));
    g.send(release(2, 0, 0));
    g.deliver({ ...ack(3), flags: FLAG_SWITCH }); // the cancel's ACK (no RELEASED flag)
    await g.net.scheduler.run();
    expect(g.sent).toHaveLength(2);
    expect(g.received.map((p) => p.seq)).toEqual([3]);
  });

  it(`bounded: past ${RELIABLE_RELEASE_BOUND} unacknowledged releases the oldest is given up`, async () => {
    const g = guarded(2);
    for (let seq = 1; seq <= RELIABLE_RELEASE_BOUND + 1; seq++) g.send(release(seq));
    await g.net.scheduler.run();
    const resent = g.sent.filter((s) => s.atNs > 0).map((s) => s.packet.seq);
    expect(resent).toHaveLength(RELIABLE_RELEASE_BOUND);
    expect(resent).not.toContain(1);
  });
});
