import { headers } from '@nats-io/transport-node';
import type { NatsConnection, PublishOptions, Subscription } from '@nats-io/transport-node';
import type { MalformedInputCounter, Subjects } from '@lockfabric/live';
import { MembershipViewSchema, decodeWire, stampBatchEpoch } from '@lockfabric/wire';

/** NATS header form of the epoch stamp, still read by the switch; batches carry it in their payload. */
export const EPOCH_HEADER = 'lockfabric-epoch';

/**
 * The newest membership epoch this node knows: from the coordinator's views and from the recovery
 * calls it answered (a recovery's epoch can reach it before the view does). None before either.
 */
export class EpochStamp {
  private epoch = 0n;

  observe(epoch: bigint): void {
    if (epoch > this.epoch) this.epoch = epoch;
  }

  get current(): bigint | undefined {
    return this.epoch > 0n ? this.epoch : undefined;
  }
}

/** Feeds `stamp` from the views on `ctl.membership`; undecodable views are counted. */
export function followMembershipEpochs(nc: NatsConnection, subjects: Subjects, stamp: EpochStamp, malformed: MalformedInputCounter): Subscription {
  const subject = subjects.membership();
  return nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) return;
      try {
        stamp.observe(decodeWire(MembershipViewSchema, msg.data, subject).epoch);
      } catch (decodeError) {
        malformed.record(subject, decodeError);
      }
    },
  });
}

/**
 * `nc` as this node's switch link sees it: every publish to `switchSubject` (or any of them) carries
 * the node's epoch (none while it knows no epoch: no coordinator runs) in the batch itself
 * (`stampBatchEpoch`), not in a NATS header: a header costs an encode here and a parse on the
 * switch for every batch, which the bare NATS round trip a switch lock is set against does not
 * pay. The stamp is taken when a batch leaves the node, so packets the recovery gate held until
 * after S3 carry the recovery's epoch. Everything else goes to `nc` unchanged; the shared link code
 * knows nothing of epochs.
 */
export function epochStampingNats(nc: NatsConnection, switchSubject: string | readonly string[], stamp: EpochStamp): NatsConnection {
  // several with multi-rack FissLock: every rack's switch input this node sends to
  const stamped = new Set(typeof switchSubject === 'string' ? [switchSubject] : switchSubject);
  const publish = (subject: string, payload?: Uint8Array | string, options?: PublishOptions): void => {
    const epoch = stamp.current;
    if (!stamped.has(subject) || epoch === undefined) return nc.publish(subject, payload, options);
    if (payload instanceof Uint8Array) return nc.publish(subject, stampBatchEpoch(payload, epoch), options);
    // not an encoded batch: the header form the switch still reads
    const hdrs = options?.headers ?? headers();
    hdrs.set(EPOCH_HEADER, epoch.toString());
    nc.publish(subject, payload, { ...options, headers: hdrs });
  };
  return new Proxy(nc, {
    get(target, property) {
      if (property === 'publish') return publish;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
