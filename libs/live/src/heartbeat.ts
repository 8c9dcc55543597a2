import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Clock, NodeId } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/sim';
import { HeartbeatSchema } from '@lockfabric/wire';
import { consoleLogger, type Logger } from './logger.js';
import { RateLimitedLog } from './rate-limited-log.js';
import type { Subjects } from './subjects.js';

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

export interface HeartbeatPublisher {
  /** Heartbeats published so far (the seq of the last one). */
  readonly seq: number;
  /** Publishes one heartbeat now, outside the schedule. */
  beat(): void;
  stop(): void;
}

/** Publishes a Heartbeat on heartbeat(role, id) now and then every `intervalMs`. */
export function startHeartbeat(options: HeartbeatOptions): HeartbeatPublisher {
  if (!(options.intervalMs > 0)) throw new RangeError(`heartbeat interval must be positive, got ${options.intervalMs} ms`);
  const subject = options.subjects.heartbeat(options.role, options.id);
  const clock = options.clock ?? new RealClock();
  const log = new RateLimitedLog(options.logger ?? consoleLogger, clock);
  let seq = 0;
  const beat = () => {
    seq++;
    const heartbeat = create(HeartbeatSchema, {
      role: options.role,
      id: options.id,
      node: options.node,
      incarnation: BigInt(options.incarnation),
      seq: BigInt(seq),
      timeNs: BigInt(Math.round(clock.nowNs())),
      ready: options.ready ? options.ready() : true,
    });
    try {
      options.nc.publish(subject, toBinary(HeartbeatSchema, heartbeat));
    } catch (error) {
      // A missed heartbeat is what failure detection is for; keep beating.
      log.warn(`heartbeat ${options.role}/${options.id}: could not publish: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  beat();
  const timer = setInterval(beat, options.intervalMs);
  return {
    get seq() {
      return seq;
    },
    beat,
    stop: () => clearInterval(timer),
  };
}
