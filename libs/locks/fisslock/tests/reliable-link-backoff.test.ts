import type { LockPacket, SwitchPort } from '@lockfabric/ports';
import { SchedulerClock, VirtualScheduler } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { ReliableLink } from '../src/reliable-link.js';

const RTO_NS = 1_000;

/** Sends one packet that is never acknowledged (or acknowledged at `ackAtNs`) and returns the send times. */
async function sendTimes(maxBackoff: number, untilNs: number, ackAtNs?: number): Promise<number[]> {
  const scheduler = new VirtualScheduler();
  const clock = new SchedulerClock(scheduler);
  const times: number[] = [];
  const port: SwitchPort = { machine: 1, send: () => times.push(scheduler.nowNs()), onPacket: () => () => undefined };
  const link = new ReliableLink(1, port, clock, RTO_NS, 0, maxBackoff);
  const ack = { type: 'ack' } as LockPacket;
  const seq = link.send({ type: 'acquire', lock: 1, machine: 1, task: 1, mode: 'exclusive', incarnation: 0, flags: 0 });
  if (ackAtNs !== undefined) {
    scheduler.at(ackAtNs, () => {
      link.acknowledge(seq, ack);
      link.send({ type: 'acquire', lock: 2, machine: 1, task: 2, mode: 'exclusive', incarnation: 0, flags: 0 });
    });
  }
  scheduler.at(untilNs, () => link.stop());
  await scheduler.run();
  return times;
}

describe('fisslock reliable link: retransmission timeout', () => {
  it('fixed by default (maxBackoff 1): an unacknowledged packet is resent every RTO', async () => {
    expect(await sendTimes(1, 6_500)).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000]);
  });

  it('with maxBackoff 4 a packet’s timeout doubles with every resend up to 4 × RTO', async () => {
    expect(await sendTimes(4, 16_500)).toEqual([0, 1_000, 3_000, 7_000, 11_000, 15_000]);
  });

  it('a packet sent after the backed-off one was acknowledged starts again at one RTO', async () => {
    // resends at 1 000, 3 000 and 7 000; the ACK at 7 500 removes it; the packet sent then is resent
    // at the first tick (every RTO) at which it is one RTO old, 9 000, not after 4 × RTO
    const times = await sendTimes(4, 9_500, 7_500);
    expect(times).toEqual([0, 1_000, 3_000, 7_000, 7_500, 9_000]);
  });

  it('refuses a back-off bound below 1', () => {
    const scheduler = new VirtualScheduler();
    const port: SwitchPort = { machine: 1, send: () => undefined, onPacket: () => () => undefined };
    expect(() => new ReliableLink(1, port, new SchedulerClock(scheduler), RTO_NS, 0, 0)).toThrow(/maxBackoff/);
  });
});
