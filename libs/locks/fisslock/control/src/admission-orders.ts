import type { ControlBus, MalformedSink, Subjects, Unsubscribe } from '@lockfabric/control';
import { FissSwitchAdmissionSchema, decodeWire } from '@lockfabric/wire';

/** A coordinator's order to a switch's admission fence (`node` 0: every switch). */
export interface AdmissionOrder {
  readonly node: number;
  readonly epoch: bigint;
  readonly open: boolean;
}

/** Follows the admission orders on the bus (what a switch applies to its fence); a malformed one is counted and dropped. */
export function followAdmissionOrders(bus: ControlBus, subjects: Subjects, malformed: MalformedSink, onOrder: (order: AdmissionOrder) => void): Unsubscribe {
  const subject = subjects.switchAdmission();
  return bus.subscribe(subject, (msg) => {
    try {
      const order = decodeWire(FissSwitchAdmissionSchema, msg.data, subject);
      onOrder({ node: order.node, epoch: order.epoch, open: order.open });
    } catch (error) {
      malformed.record(subject, error);
    }
  });
}
