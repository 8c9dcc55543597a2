import type { Msg, NatsConnection, Subscription, SubscriptionOptions } from '@nats-io/transport-node';
import { SwitchIngress, createSubjects, silentLogger } from '@lockfabric/live';
import * as wire from '@lockfabric/wire';
import { encodePacketBatch, stampBatchEpoch } from '@lockfabric/wire';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PacketAdmission } from './admission.js';
import { admitBatches } from './admission-filter.js';

vi.mock('@lockfabric/wire', async (original) => {
  const actual = await original<typeof import('@lockfabric/wire')>();
  // counted: the fence must take the stamp from the ingress's one decode, not parse the frame again
  return { ...actual, batchEpochOf: vi.fn(actual.batchEpochOf) };
});

const subjects = createSubjects('test');
const INTO = subjects.switchIn(0);

/** Just enough of a NATS connection: subscribe keeps callbacks, `deliver` plays a message in. */
function fakeNats() {
  const callbacks = new Map<string, (error: Error | null, msg: Msg) => void>();
  const nc = {
    subscribe: (subject: string, options?: SubscriptionOptions) => {
      if (options?.callback) callbacks.set(subject, options.callback);
      return { unsubscribe: () => undefined } as unknown as Subscription;
    },
  } as unknown as NatsConnection;
  const batch = (lock: number) => encodePacketBatch([{ type: 'acquire', lock, machine: 1, task: 1, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0 }], 1);
  /** A batch stamped in the header form (tools, an earlier build's nodes). */
  const deliver = (lock: number, stamp: string | undefined): void => {
    const msg = { subject: INTO, data: batch(lock), headers: stamp === undefined ? undefined : { get: (k: string) => (k === 'lockfabric-epoch' ? stamp : '') } } as unknown as Msg;
    callbacks.get(INTO)?.(null, msg);
  };
  /** A batch stamped in its payload, as compute nodes send it; no headers. */
  const deliverBatch = (epoch: bigint | undefined): void => {
    const data = batch(Number(epoch ?? 0n));
    const msg = { subject: INTO, data: epoch === undefined ? data : stampBatchEpoch(data, epoch), headers: undefined } as unknown as Msg;
    callbacks.get(INTO)?.(null, msg);
  };
  return { nc, deliver, deliverBatch };
}

/** The switch's ingress with its admission, as switch-dataplane.ts builds it; `seen` lists the locks that entered. */
function fencedIngress() {
  const { nc, deliver, deliverBatch } = fakeNats();
  const admission = new PacketAdmission();
  const seen: number[] = [];
  const ingress = new SwitchIngress({ nc, subjects, rack: 0, logger: silentLogger, admit: admitBatches(admission), onPacket: (packet) => void seen.push(packet.lock) });
  return { ingress, admission, seen, deliver, deliverBatch };
}

describe('the admission in front of the switch ingress', () => {
  afterEach(() => vi.mocked(wire.batchEpochOf).mockClear());

  it('reads the stamp from the batch itself: closed and stale batches are dropped, unstamped ones pass', () => {
    const { ingress, admission, seen, deliverBatch } = fencedIngress();
    deliverBatch(3n); // closed: dropped
    deliverBatch(undefined); // unstamped: passes (lock 0)
    admission.order(4n, true);
    deliverBatch(3n); // stale
    deliverBatch(4n);
    deliverBatch(5n);
    expect(seen).toStrictEqual([0, 4, 5]);
    expect(admission.dropsByReason()).toStrictEqual({ closed: 1, 'stale-epoch': 1 });
    // refused batches are the admission's count, not the ingress's
    expect(ingress.stats()).toMatchObject({ batchesReceived: 3, packetsReceived: 3 });
    // one parse per batch: the decode that found the packets also found the stamp
    expect(wire.batchEpochOf).not.toHaveBeenCalled();
  });

  it('falls back to the header form when the payload carries no stamp', () => {
    const { admission, seen, deliver } = fencedIngress();
    deliver(1, '3'); // closed: dropped
    deliver(2, undefined); // unstamped: passes
    admission.order(4n, true);
    deliver(3, '3'); // stale
    deliver(4, '4');
    deliver(5, 'garbage'); // not a number: unstamped
    expect(seen).toStrictEqual([2, 4, 5]);
    expect(admission.dropsByReason()).toStrictEqual({ closed: 1, 'stale-epoch': 1 });
  });
});
