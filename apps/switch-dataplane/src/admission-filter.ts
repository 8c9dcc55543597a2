import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { BatchAdmit, Logger, MalformedInputCounter, Subjects } from '@lockfabric/live';
import { FissSwitchAdmissionSchema, decodeWire } from '@lockfabric/wire';
import { EPOCH_HEADER, parseEpochStamp } from './admission.js';
import type { PacketAdmission } from './admission.js';

/**
 * The admission as the switch ingress asks it (`SwitchIngressOptions.admit`): a batch enters when
 * the fence passes its stamp, refused ones are dropped (counted by the admission, per batch). The
 * stamp is the one the ingress's decode read from the payload (compute nodes stamp there), else the
 * header form (tools, and nodes of an earlier build); a message without headers is never parsed for them.
 */
export function admitBatches(admission: PacketAdmission): BatchAdmit {
  return (epoch, msg) => admission.admit(epoch ?? headerStamp(msg)) === 'pass';
}

function headerStamp(msg: Pick<Msg, 'headers'>): bigint | undefined {
  return parseEpochStamp(msg.headers?.get(EPOCH_HEADER) || undefined);
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
  const subject = deps.subjects.switchAdmission();
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
