import type { NatsConnection, PublishOptions } from '@nats-io/transport-node';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { EPOCH_HEADER, EpochStamp, epochStampingNats } from '../src/epoch-stamp.js';

function fakeNats() {
  const published: { subject: string; epoch: string | undefined; other: string | undefined }[] = [];
  const nc = {
    publish: (subject: string, _payload?: Uint8Array, options?: PublishOptions) =>
      void published.push({ subject, epoch: options?.headers?.get(EPOCH_HEADER) || undefined, other: options?.headers?.get('traceparent') || undefined }),
    isClosed: () => false,
  } as unknown as NatsConnection;
  return { nc, published };
}

describe('epoch stamping of the batches a compute node sends into its switch', () => {
  it('stamps the newest epoch known on the switch subject only, keeps other headers, and stamps nothing before any epoch', () => {
    const { nc, published } = fakeNats();
    const stamp = new EpochStamp();
    const stamped = epochStampingNats(nc, 'sw.0.in', stamp);
    stamped.publish('sw.0.in', new Uint8Array());
    stamp.observe(5n);
    stamp.observe(3n); // an older view changes nothing
    const traced = headers();
    traced.set('traceparent', 'tp');
    stamped.publish('sw.0.in', new Uint8Array(), { headers: traced });
    stamped.publish('node.1.msg', new Uint8Array());
    stamp.observe(6n); // a recovery's epoch
    stamped.publish('sw.0.in', new Uint8Array());
    expect((stamped as unknown as { isClosed(): boolean }).isClosed()).toBe(false);
    expect(published).toStrictEqual([
      { subject: 'sw.0.in', epoch: undefined, other: undefined },
      { subject: 'sw.0.in', epoch: '5', other: 'tp' },
      { subject: 'node.1.msg', epoch: undefined, other: undefined },
      { subject: 'sw.0.in', epoch: '6', other: undefined },
    ]);
  });
});
