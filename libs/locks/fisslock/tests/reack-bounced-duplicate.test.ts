import { describe, expect, it } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FLAG_DUP, FLAG_GRANTED, FLAG_INVALID, ackStatusOf } from '../src/wire.js';
import { fissSim } from './support/fiss-sim.js';

/**
 * A re-ACK stands in for an ACK that was lost. When the first copy of a request bounced at a
 * machine (not DUP: the switch decides its bounced copy again, FissLock §4.2 / spec §5.2 REACHED),
 * the re-ACK of a later DUP copy (the requester's resend, which the switch only routes) must still
 * say "bounced, not DUP", or the requester takes its request for a possibly lost ① grant. The
 * rule alone, and the older one that fails it: src/pool/receive-dedup.test.ts (reAckDup).
 */
async function scenario() {
  const acksToB: LockPacket[] = [];
  let bAcquireSeq = -1;
  const sim = fissSim({
    tap: (direction, machine, p) => {
      if (direction === 'out' && p.type === 'acquire' && p.mode === 'exclusive' && bAcquireSeq < 0 && machine === sim.nodes[1]) bAcquireSeq = p.seq;
      if (direction === 'in' && machine === sim.nodes[1] && p.type === 'ack' && p.lock === 0) acksToB.push(p);
    },
  });
  const [a, b, c] = sim.nodes as [number, number, number];
  // a holds lock 0 shared (①, agent on a); c is granted ② and its GRANTED copy to a is held back
  const g0p = sim.client(a, 0).acquire(0, 'shared');
  await sim.step(20_000);
  const g0 = await g0p;
  sim.fault({ direction: 'in', machine: a, match: (p) => p.type === 'acquire' && (p.flags & FLAG_GRANTED) !== 0, action: { delayNs: 600_000 } });
  const gcp = sim.client(c, 1).acquire(0, 'shared');
  await sim.step(20_000);
  const gc = await gcp;
  // a's holder leaves: a's FREE (inca 0) is refused (the decider counted c's ②); the refusal is held
  // back too, so a has no live agent while the decider still names it
  sim.fault({ direction: 'in', machine: a, match: (p) => p.type === 'free' && (p.flags & FLAG_INVALID) !== 0, action: { delayNs: 500_000 } });
  await sim.client(a, 0).release(g0);
  await sim.step(10_000);
  // b asks exclusive: forwarded to a (③), bounced there (not DUP); that ACK is lost, so b resends
  // after its RTO and the switch routes the resend (DUP) to a again, which re-ACKs it
  sim.fault({ direction: 'in', machine: b, match: (p) => p.type === 'ack' && p.lock === 0, action: 'drop' });
  const gbp = sim.client(b, 2).acquire(0, 'exclusive');
  await sim.step(300_000);
  const answers = acksToB.filter((p) => p.seq === bAcquireSeq).map((p) => ({ status: ackStatusOf(p.flags), dup: (p.flags & FLAG_DUP) !== 0 }));
  // the rest of the run: the refusal and the copy arrive, c leaves, b is granted
  await sim.step(1_000_000);
  await sim.client(c, 1).release(gc);
  await sim.step(1_000_000);
  const gb = await gbp;
  return { sim, answers, gb, a };
}

describe('fisslock re-ACK of a duplicate whose first copy bounced', () => {
  it('carries the bounced copy\'s DUP bit (clear): the requester learns its request is on its way to be decided', async () => {
    const { sim, answers, gb, a } = await scenario();
    expect(answers).toEqual([
      { status: 'bounced', dup: false }, // the first ACK (dropped on the way)
      { status: 'bounced', dup: false }, // the re-ACK of the DUP resend
    ]);
    expect(sim.pool(a).counters.duplicates).toBeGreaterThanOrEqual(1);
    expect(gb.mode).toBe('exclusive');
  });

});
