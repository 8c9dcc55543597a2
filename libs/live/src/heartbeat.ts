import type { NatsConnection } from '@nats-io/transport-node';
import { startHeartbeatSender } from '@lockfabric/control';
import type { HeartbeatPublisher } from '@lockfabric/control';
import type { Clock, NodeId } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { consoleLogger, type Logger } from './logger.js';
import { NatsControlBus } from './nats-control-bus.js';
import { RateLimitedLog } from './rate-limited-log.js';
import type { Subjects } from './subjects.js';

export type { HeartbeatPublisher };

export interface HeartbeatOptions {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
  /** Grows on every restart of this instance. */
  readonly incarnation: number;
  readonly intervalMs: number;
  /** Reported in each heartbeat; true when omitted. */
  readonly ready?: () => boolean;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** Publishes a Heartbeat on heartbeat(role, id) now and then every `intervalMs` (libs/control's sender over NATS). */
export function startHeartbeat(options: HeartbeatOptions): HeartbeatPublisher {
  const clock = options.clock ?? new RealClock();
  const base = options.logger ?? consoleLogger;
  const log = new RateLimitedLog(base, clock);
  const logger: Logger = { info: (m) => base.info(m), warn: (m) => log.warn(m), error: (m) => base.error(m) };
  const { nc, ...rest } = options;
  return startHeartbeatSender({ ...rest, bus: new NatsControlBus(nc), clock, logger });
}
