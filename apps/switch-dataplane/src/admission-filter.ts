import type { Msg, NatsConnection, Subscription, SubscriptionOptions } from '@nats-io/transport-node';
import type { Logger, MalformedInputCounter, Subjects } from '@lockfabric/live';
import { FissSwitchAdmissionSchema, batchEpochOf, decodeWire } from '@lockfabric/wire';
import { EPOCH_HEADER, parseEpochStamp } from './admission.js';
import type { PacketAdmission } from './admission.js';

/** Subject of the coordinator's admission orders (a child of the switch announcement subject). */
export function admissionSubject(subjects: Subjects): string {
  return `${subjects.fissSwitch()}.admit`;
}

/**
 * `nc` as the switch's ingress sees it: a message on `ingressSubject` whose epoch stamp the
 * admission refuses is dropped before the ingress decodes it (counted by the admission, per
 * batch); every other call goes to `nc` unchanged. This keeps the fence out of the shared link code.
 */
export function admissionFilteredNats(nc: NatsConnection, ingressSubject: string, admission: PacketAdmission): NatsConnection {
  const subscribe = (subject: string, options?: SubscriptionOptions): Subscription => {
    const callback = options?.callback;
    if (subject !== ingressSubject || !callback) return nc.subscribe(subject, options);
    return nc.subscribe(subject, {
      ...options,
      callback: (error, msg: Msg) => {
        if (!error && admission.admit(epochStampOf(msg)) !== 'pass') return;
        callback(error, msg);
      },
    });
  };
  return new Proxy(nc, {
    get(target, property) {
      if (property === 'subscribe') return subscribe;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * A batch's epoch stamp: the one in its payload (compute nodes stamp there), else the header form
 * (tools, and nodes of an earlier build); a message without headers is never parsed for them.
 */
export function epochStampOf(msg: Pick<Msg, 'data' | 'headers'>): bigint | undefined {
  return batchEpochOf(msg.data) ?? parseEpochStamp(msg.headers?.get(EPOCH_HEADER) || undefined);
}

export interface AdmissionOrdersDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  /** This switch's node id: orders for another node are ignored (0 addresses every switch). */
  readonly node: number;
  readonly admission: PacketAdmission;
  readonly logger: Logger;
  readonly malformed: MalformedInputCounter;
  /** Called when an order closes an open switch (a FissLock recovery begins). */
  readonly onClose?: () => void;
}

/** Applies the coordinator's FissSwitchAdmission orders to `admission`; returns the subscription. */
export function followAdmissionOrders(deps: AdmissionOrdersDeps): Subscription {
  const subject = admissionSubject(deps.subjects);
  return deps.nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) return;
      try {
        const order = decodeWire(FissSwitchAdmissionSchema, msg.data, subject);
        if (order.node !== 0 && order.node !== deps.node) return;
        const wasOpen = deps.admission.state.open;
        if (!deps.admission.order(order.epoch, order.open)) return;
        deps.logger.info(`switch admission: ${order.open ? 'open' : 'closed'} at epoch ${order.epoch}`);
        if (wasOpen && !order.open) deps.onClose?.();
      } catch (decodeError) {
        deps.malformed.record(subject, decodeError);
      }
    },
  });
}
