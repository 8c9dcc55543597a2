import type { Msg, NatsConnection, Subscription, SubscriptionOptions } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { PacketAdmission } from './admission.js';
import { admissionFilteredNats } from './admission-filter.js';

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
  const deliver = (subject: string, stamp: string | undefined): void => {
    const msg = { subject, data: new Uint8Array(), headers: stamp === undefined ? undefined : { get: (k: string) => (k === 'lockfabric-epoch' ? stamp : '') } } as unknown as Msg;
    callbacks.get(subject)?.(null, msg);
  };
  return { nc, deliver };
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
});
