import { BusQueueParticipant } from '@lockfabric/control';
import type { Subjects } from '@lockfabric/control';
import { NatsControlBus } from '@lockfabric/live';
import type { NodeId } from '@lockfabric/ports';
import type { NatsConnection } from '@nats-io/transport-node';

/** A compute node driven through queue-lock recovery over a NATS connection (BusQueueParticipant on NATS). */
export class NatsQueueParticipant extends BusQueueParticipant {
  constructor(nc: NatsConnection, subjects: Subjects, machine: NodeId, timeoutMs: number, gateLeaseMs: number) {
    super(new NatsControlBus(nc), subjects, machine, timeoutMs, gateLeaseMs);
  }
}
