import type { Msg, NatsConnection, Subscription, SubscriptionOptions } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { PacketAdmission } from './admission.js';
import { admissionFilteredNats } from './admission-filter.js';
import { decodePacketBatch, encodePacketBatch, stampBatchEpoch } from '@lockfabric/wire';

/** Just enough of a NATS connection: subscribe keeps callbacks, `deliver` plays a message in. */
function fakeNats() {
  const callbacks = new Map<string, (error: Error | null, msg: Msg) => void>();
  const nc = {
    subscribe: (subject: string, options?: SubscriptionOptions) => {
      if (options?.callback) callbacks.set(subject, options.callback);
      return { unsubscribe: () => undefined } as unknown as Subscription;
    },
    info: { server_name: 'fake' },
  } as unknown as NatsConnection;
  /** A message stamped in the header form (tools, an earlier build's nodes). */
  const deliver = (subject: string, stamp: string | undefined): void => {
    const msg = { subject, data: new Uint8Array(), headers: stamp === undefined ? undefined : { get: (k: string) => (k === 'lockfabric-epoch' ? stamp : '') } } as unknown as Msg;
    callbacks.get(subject)?.(null, msg);
  };
  /** A batch stamped in its payload, as compute nodes send it; no headers. */
  const deliverBatch = (subject: string, epoch: bigint | undefined): void => {
    const data = encodePacketBatch([{ type: 'acquire', lock: Number(epoch ?? 0n), machine: 1, task: 1, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0 }], 1);
    const msg = { subject, data: epoch === undefined ? data : stampBatchEpoch(data, epoch), headers: undefined } as unknown as Msg;
    callbacks.get(subject)?.(null, msg);
  };
  return { nc, deliver, deliverBatch };
}

describe('the admission filter in front of the switch ingress', () => {
  it('drops refused batches on the ingress subject only; other subjects and calls go through', () => {
    const { nc, deliver } = fakeNats();
    const admission = new PacketAdmission();
    const filtered = admissionFilteredNats(nc, 'sw.0.in', admission);
    const seen: string[] = [];
    filtered.subscribe('sw.0.in', { callback: (_e, m) => void seen.push(`in:${m.headers?.get('lockfabric-epoch') ?? '-'}`) });
    filtered.subscribe('other', { callback: () => void seen.push('other') });
    expect((filtered as unknown as { info: { server_name: string } }).info.server_name).toBe('fake');

    deliver('sw.0.in', '3'); // closed: dropped
    deliver('sw.0.in', undefined); // unstamped: passes
    deliver('other', '3');
    admission.order(4n, true);
    deliver('sw.0.in', '3'); // stale
    deliver('sw.0.in', '4');
    expect(seen).toStrictEqual(['in:-', 'other', 'in:4']);
    expect(admission.dropsByReason()).toStrictEqual({ closed: 1, 'stale-epoch': 1 });
  });

  it('reads the stamp from the batch itself: closed and stale batches are dropped, unstamped ones pass', () => {
    const { nc, deliverBatch } = fakeNats();
    const admission = new PacketAdmission();
    const seen: number[] = [];
    admissionFilteredNats(nc, 'sw.0.in', admission).subscribe('sw.0.in', { callback: (_e, m) => void seen.push(decodePacketBatch(m.data, 'test').packets[0]!.lock) });
    deliverBatch('sw.0.in', 3n); // closed: dropped
    deliverBatch('sw.0.in', undefined); // unstamped: passes (lock 0)
    admission.order(4n, true);
    deliverBatch('sw.0.in', 3n); // stale
    deliverBatch('sw.0.in', 4n);
    deliverBatch('sw.0.in', 5n);
    expect(seen).toStrictEqual([0, 4, 5]);
    expect(admission.dropsByReason()).toStrictEqual({ closed: 1, 'stale-epoch': 1 });
  });
});
