import type { NatsConnection, PublishOptions } from '@nats-io/transport-node';
import { headers } from '@nats-io/transport-node';
import { batchEpochOf, encodePacketBatch } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { EPOCH_HEADER, EpochStamp, epochStampingNats } from '../src/epoch-stamp.js';

function fakeNats() {
  const published: { subject: string; epoch: bigint | undefined; headerKeys: string[] }[] = [];
  const nc = {
    publish: (subject: string, payload?: Uint8Array, options?: PublishOptions) =>
      void published.push({ subject, epoch: payload ? batchEpochOf(payload) : undefined, headerKeys: options?.headers ? [...options.headers.keys()] : [] }),
    isClosed: () => false,
  } as unknown as NatsConnection;
  return { nc, published };
}

const batch = () => encodePacketBatch([{ type: 'acquire', lock: 3, machine: 1, task: 2, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0 }], 1);

describe('epoch stamping of the batches a compute node sends into its switch', () => {
  it('stamps the newest epoch known in the batch on the switch subject only, adds no header, and stamps nothing before any epoch', () => {
    const { nc, published } = fakeNats();
    const stamp = new EpochStamp();
    const stamped = epochStampingNats(nc, 'sw.0.in', stamp);
    stamped.publish('sw.0.in', batch());
    stamp.observe(5n);
    stamp.observe(3n); // an older view changes nothing
    const traced = headers();
    traced.set('traceparent', 'tp');
    stamped.publish('sw.0.in', batch(), { headers: traced });
    stamped.publish('node.1.msg', batch());
    stamp.observe(6n); // a recovery's epoch
    stamped.publish('sw.0.in', batch());
    expect((stamped as unknown as { isClosed(): boolean }).isClosed()).toBe(false);
    // headers per batch: none of its own (a traced batch keeps the trace's and nothing more)
    expect(published).toStrictEqual([
      { subject: 'sw.0.in', epoch: undefined, headerKeys: [] },
      { subject: 'sw.0.in', epoch: 5n, headerKeys: ['traceparent'] },
      { subject: 'node.1.msg', epoch: undefined, headerKeys: [] },
      { subject: 'sw.0.in', epoch: 6n, headerKeys: [] },
    ]);
  });

  it('a stamp costs a batch one field: the payload grows by its tag and varint bytes only', () => {
    const { nc } = fakeNats();
    const sizes: number[] = [];
    const stamp = new EpochStamp();
    stamp.observe(300n); // a two-byte varint
    const measured = { ...nc, publish: (_s: string, payload?: Uint8Array) => void sizes.push(payload?.length ?? 0) } as unknown as NatsConnection;
    epochStampingNats(measured, 'sw.0.in', stamp).publish('sw.0.in', batch());
    expect(sizes).toStrictEqual([batch().length + 3]);
  });

  it('a payload that is not an encoded batch gets the header form', () => {
    const options: (PublishOptions | undefined)[] = [];
    const nc = { publish: (_s: string, _p?: unknown, o?: PublishOptions) => void options.push(o) } as unknown as NatsConnection;
    const stamp = new EpochStamp();
    stamp.observe(7n);
    epochStampingNats(nc, 'sw.0.in', stamp).publish('sw.0.in', 'text');
    expect(options[0]?.headers?.get(EPOCH_HEADER)).toBe('7');
  });
});
