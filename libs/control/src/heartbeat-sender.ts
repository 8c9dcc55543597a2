import { create, toBinary } from '@bufbuild/protobuf';
import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { Clock, NodeId } from '@lockfabric/ports';
import { HeartbeatSchema } from '@lockfabric/wire';
import type { ControlBus } from './bus.js';
import { silentLogger } from './logger.js';
import type { Logger } from './logger.js';
import type { Subjects } from './subjects.js';

export interface HeartbeatSenderOptions {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  /** Schedules the beats (live: RealClock; sim: the virtual clock) and stamps them. */
  readonly clock: Clock;
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
  /** Grows on every restart of this instance. */
  readonly incarnation: number | bigint;
  readonly intervalMs: number;
  /** Reported in each heartbeat; true when omitted. */
  readonly ready?: () => boolean;
  readonly logger?: Logger;
}

export interface HeartbeatPublisher {
  /** Heartbeats published so far (the seq of the last one). */
  readonly seq: number;
  /** Publishes one heartbeat now, outside the schedule. */
  beat(): void;
  stop(): void;
}

/** Publishes a Heartbeat on heartbeat(role, id) now and then every `intervalMs` of `clock`. */
export function startHeartbeatSender(options: HeartbeatSenderOptions): HeartbeatPublisher {
  if (!(options.intervalMs > 0)) throw new RangeError(`heartbeat interval must be positive, got ${options.intervalMs} ms`);
  const subject = options.subjects.heartbeat(options.role, options.id);
  const { clock } = options;
  const logger = options.logger ?? silentLogger;
  const stop = new AbortController();
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
      options.bus.publish(subject, toBinary(HeartbeatSchema, heartbeat));
    } catch (error) {
      // A missed heartbeat is what failure detection is for; keep beating.
      logger.warn(`heartbeat ${options.role}/${options.id}: could not publish: ${errorMessage(error)}`);
    }
  };
  beat();
  void (async () => {
    for (;;) {
      await clock.sleep(options.intervalMs * NS_PER_MS, stop.signal);
      beat();
    }
  })().catch(() => undefined);
  return {
    get seq() {
      return seq;
    },
    beat,
    stop: () => stop.abort(),
  };
}
