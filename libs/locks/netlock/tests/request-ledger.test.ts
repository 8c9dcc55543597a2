import { FLAG_CANCEL, FLAG_CONTINUE, FLAG_SWITCH } from '@lockfabric/lock-srvlock';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';
import { createSwitchNet } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { NETLOCK_FLAG_GONE, REQUEST_LEDGER_BOUND, netlockProgram, slotTag, withRequestLedger } from '../src/index.js';

const SELF = 4;
const US = 1_000;
const base: LockPacket = { type: 'acquire', lock: 9, machine: 2, task: SELF, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0, dst: 1 };
const acquire = (seq: number): LockPacket => ({ ...base, seq });
const cancel = (seq: number): LockPacket => ({ ...base, type: 'release', seq, flags: FLAG_CANCEL });
const grant = (seq: number, tag: number, flags = 0): LockPacket => ({ ...base, type: 'grant', seq, incarnation: tag, flags: FLAG_SWITCH | flags, dst: 2 });
const answer = (seq: number, flags: number): LockPacket => ({ ...base, type: 'ack', seq, flags: FLAG_SWITCH | flags, dst: 2 });

/** The ledger over a switch port that records what leaves (with the virtual time) and answers only when told. */
function ledger(maxAttempts = 5) {
  const net = createSwitchNet({ seed: 1, computeNodes: [2], program: netlockProgram() });
  const sent: { atNs: number; packet: LockPacket }[] = [];
  const handlers: ((packet: LockPacket) => void)[] = [];
  const port: SwitchPort = { machine: 2, send: (packet) => void sent.push({ atNs: net.clock.nowNs(), packet }), onPacket: (h) => (handlers.push(h), () => undefined) };
  const stats = { duplicates: 0, strays: 0, polls: 0, givenUp: 0 };
  const ports = withRequestLedger({ self: { node: 2, client: SELF }, switchPort: port, clock: net.clock } as unknown as ClientPorts, { retransmitNs: 10 * US, maxAttempts }, stats);
  const received: LockPacket[] = [];
  ports.switchPort?.onPacket((p) => received.push(p));
  return { net, sent, stats, received, send: (p: LockPacket) => ports.switchPort?.send(p), deliver: (p: LockPacket) => handlers.forEach((h) => h(p)) };
}

describe('withRequestLedger: what the switch needs per request, and GRANTs nobody waits for', () => {
  it('stamps each ACQUIRE with its push-back count', () => {
    const l = ledger();
    l.send(acquire(1));
    l.deliver({ ...acquire(1), type: 'push-back', flags: FLAG_SWITCH, dst: 2 });
    l.send(acquire(1));
    l.send(acquire(1));
    expect(l.sent.map((s) => s.packet.incarnation)).toEqual([0, 1, 1]);
    expect(l.received.map((p) => p.type)).toEqual(['push-back']);
  });

  it('passes the first GRANT up, drops a repeat of it, and releases a second entry of the request by its tag', () => {
    const l = ledger();
    l.send(acquire(1));
    l.deliver(grant(1, slotTag(3, 7)));
    l.deliver(grant(1, slotTag(3, 7)));
    l.deliver(grant(1, slotTag(5, 8), FLAG_CONTINUE));
    expect(l.received).toHaveLength(1);
    expect(l.stats).toMatchObject({ duplicates: 1, strays: 1 });
    // The stray reader's CONTINUE is reflected, then its entry released.
    expect(l.sent.slice(1).map((s) => [s.packet.type, s.packet.incarnation])).toEqual([
      ['notify', slotTag(5, 8)],
      ['release', slotTag(5, 8)],
    ]);
  });

  it('a cancelled request is asked about again, the interval doubling, until GONE; only the answer the client waits for goes up', async () => {
    const l = ledger(10);
    l.send(acquire(1));
    l.send(cancel(1));
    l.deliver(answer(1, 0)); // deferred: the client's cancel is answered
    l.net.scheduler.at(35 * US, () => l.deliver(answer(1, 0))); // a poll answered: still waiting
    l.net.scheduler.at(75 * US, () => l.deliver(answer(1, NETLOCK_FLAG_GONE)));
    await l.net.scheduler.run();
    expect(l.sent.filter((s) => (s.packet.flags & FLAG_CANCEL) !== 0).map((s) => s.atNs / US)).toEqual([0, 10, 30, 70]);
    expect(l.received.map((p) => p.type)).toEqual(['ack']);
    expect(l.stats.polls).toBe(3);
  });

  it('a cancelled request whose GRANT comes: released by its tag, polls stop; unanswered polls end at maxAttempts', async () => {
    const l = ledger(5);
    l.send(acquire(1));
    l.send(cancel(1));
    l.send(acquire(2));
    l.send(cancel(2));
    l.net.scheduler.at(15 * US, () => l.deliver(grant(1, slotTag(2, 4))));
    await l.net.scheduler.run();
    const of = (seq: number) => l.sent.filter((s) => s.packet.seq === seq).map((s) => `${s.packet.type}${(s.packet.flags & FLAG_CANCEL) !== 0 ? '/cancel' : ''}@${s.atNs / US}`);
    expect(of(1)).toEqual(['acquire@0', 'release/cancel@0', 'release/cancel@10', 'release@15']);
    expect(of(2)).toEqual(['acquire@0', 'release/cancel@0', 'release/cancel@10', 'release/cancel@30', 'release/cancel@70', 'release/cancel@150', 'release/cancel@310']);
    expect(l.received).toEqual([]);
    expect(l.stats).toMatchObject({ strays: 1, givenUp: 1 });
  });

  it('is bounded: past the bound the oldest finished request is forgotten, and its late GRANT is released as a stray', () => {
    const l = ledger();
    for (let seq = 1; seq <= REQUEST_LEDGER_BOUND + 1; seq++) {
      l.send(acquire(seq));
      l.deliver(grant(seq, slotTag(1, seq)));
      l.send({ ...base, type: 'release', seq, incarnation: slotTag(1, seq) });
    }
    l.deliver(grant(2, slotTag(1, 2))); // still remembered: a repeat of a released entry, dropped
    l.deliver(grant(1, slotTag(1, 1))); // forgotten: released again by its tag
    expect(l.stats).toMatchObject({ duplicates: 1, strays: 1 });
  });
});
