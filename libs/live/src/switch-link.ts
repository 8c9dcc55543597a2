import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { MalformedInputError, rackOfLock, type LockPacket, type NodeId, type SwitchPort, errorMessage } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { decodePacketBatch, encodePacketBatch } from '@lockfabric/wire';
import { consoleLogger, type Logger } from './logger.js';
import { MalformedInputCounter } from './malformed-input.js';
import { RateLimitedLog } from './rate-limited-log.js';
import type { Subjects } from './subjects.js';
import { tracePublishOptions } from './trace-header.js';

/** Packets per NATS message at most: keeps a batch far below NATS's default 1 MB payload limit. */
export const DEFAULT_MAX_BATCH_PACKETS = 1024;

export interface PacketLinkStats {
  readonly packetsSent: number;
  readonly batchesSent: number;
  readonly packetsReceived: number;
  readonly batchesReceived: number;
  readonly sendFailures: number;
  readonly handlerErrors: number;
  /** Packets dropped because their batch exceeded the per-message bound. */
  readonly oversizeDrops: number;
}

interface LinkCommon {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly logger?: Logger;
  readonly malformed?: MalformedInputCounter;
  /** Packets per NATS message at most. */
  readonly maxBatchPackets?: number;
}

/**
 * Collects the packets sent to one subject during an event-loop turn and publishes them as one
 * PacketBatch when the turn ends (or when the batch is full): many clients acquiring at once cost
 * one NATS message per turn instead of one per packet.
 */
class PacketBatcher {
  private pending: LockPacket[] = [];
  private scheduled: ReturnType<typeof setImmediate> | undefined;

  constructor(
    private readonly publish: (packets: LockPacket[]) => void,
    private readonly maxPackets: number,
  ) {}

  add(packet: LockPacket): void {
    this.pending.push(packet);
    if (this.pending.length >= this.maxPackets) this.flush();
    else this.scheduled ??= setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.pending.length === 0) return;
    const packets = this.pending;
    this.pending = [];
    this.publish(packets);
  }
}

/** Shared by both ends: encode, publish with the first trace as a header, count, decode. */
class PacketLinkBase {
  protected readonly nc: NatsConnection;
  protected readonly subjects: Subjects;
  protected readonly logger: Logger;
  protected readonly malformed: MalformedInputCounter;
  protected readonly warnLog: RateLimitedLog;
  protected readonly maxBatchPackets: number;
  protected readonly counters = { packetsSent: 0, batchesSent: 0, packetsReceived: 0, batchesReceived: 0, sendFailures: 0, handlerErrors: 0, oversizeDrops: 0 };

  constructor(options: LinkCommon) {
    this.nc = options.nc;
    this.subjects = options.subjects;
    this.logger = options.logger ?? consoleLogger;
    const clock = new RealClock();
    this.malformed = options.malformed ?? new MalformedInputCounter({ logger: this.logger, clock });
    this.warnLog = new RateLimitedLog(this.logger, clock);
    this.maxBatchPackets = options.maxBatchPackets ?? DEFAULT_MAX_BATCH_PACKETS;
  }

  stats(): PacketLinkStats {
    return { ...this.counters };
  }

  protected publishBatch(subject: string, packets: readonly LockPacket[], sender: number): void {
    try {
      // Each packet carries its own trace; the header names the first, for tools that read headers only.
      const traced = packets.find((packet) => packet.trace !== undefined);
      this.nc.publish(subject, encodePacketBatch(packets, sender), tracePublishOptions(traced?.trace));
      this.counters.batchesSent++;
      this.counters.packetsSent += packets.length;
    } catch (error) {
      // Packets are datagrams: protocols over the switch already survive loss.
      this.counters.sendFailures += packets.length;
      this.warnLog.warn(`switch link: could not publish ${packets.length} packets to ${subject}: ${errorMessage(error)}`);
    }
  }

  /**
   * Decoded packets of a NATS message, after counting whatever was malformed in it; undefined also
   * when `admit` refuses the batch (it is then neither counted nor checked packet by packet).
   */
  protected decode(subject: string, error: Error | null, msg: Msg, admit?: BatchAdmit): { sender: number; packets: LockPacket[] } | undefined {
    if (error) {
      this.warnLog.warn(`switch link: subscription error on ${subject}: ${error.message}`);
      return undefined;
    }
    try {
      const batch = decodePacketBatch(msg.data, subject);
      if (admit !== undefined && !admit(batch.epoch, msg)) return undefined;
      for (const packetError of batch.errors) this.malformed.record(subject, packetError, `machine ${batch.sender}`);
      let packets = batch.packets;
      // No sender of ours batches more than the bound: one message may not buy a flooding peer
      // more than a bound's worth of work before the next peer's message is handled.
      if (packets.length > this.maxBatchPackets) {
        this.counters.oversizeDrops += packets.length - this.maxBatchPackets;
        this.malformed.record(subject, new MalformedInputError(subject, `batch of ${packets.length} packets exceeds the bound of ${this.maxBatchPackets}; the excess is dropped`), `machine ${batch.sender}`);
        packets = packets.slice(0, this.maxBatchPackets);
      }
      this.counters.batchesReceived++;
      this.counters.packetsReceived += packets.length;
      return { sender: batch.sender, packets };
    } catch (decodeError) {
      this.malformed.record(subject, decodeError);
      return undefined;
    }
  }

  protected guard(run: () => void): void {
    try {
      run();
    } catch (error) {
      this.counters.handlerErrors++;
      this.warnLog.warn(`switch link: packet handler threw: ${errorMessage(error)}`);
    }
  }
}

export interface SwitchLinkOptions extends LinkCommon {
  readonly machine: NodeId;
  /** Rack whose switch this machine is wired to. */
  readonly rack: number;
  /**
   * Switches the lock ids are partitioned over (FissLock §5.4). With more than one, each packet goes
   * to the switch that owns its lock (`rackOfLock`), this rack's or another's; default 1: all to `rack`.
   */
  readonly racks?: number;
}

/** The SwitchPort of one machine: packets go to its rack's switch; egress for it comes back. */
export class SwitchLink extends PacketLinkBase implements SwitchPort {
  readonly machine: NodeId;
  private readonly handlers = new Set<(packet: LockPacket) => void>();
  /** One batcher per switch this machine sends to (one unless the lock ids span several racks). */
  private readonly batchers: PacketBatcher[];
  private readonly racks: number;
  private readonly subscription: Subscription;

  constructor(options: SwitchLinkOptions) {
    super(options);
    this.machine = options.machine;
    this.racks = options.racks ?? 1;
    const batcherTo = (rack: number) => {
      const into = options.subjects.switchIn(rack);
      return new PacketBatcher((packets) => this.publishBatch(into, packets, this.machine), this.maxBatchPackets);
    };
    this.batchers = this.racks > 1 ? Array.from({ length: this.racks }, (_, rack) => batcherTo(rack)) : [batcherTo(options.rack)];
    const from = options.subjects.nodePackets(options.machine);
    this.subscription = this.nc.subscribe(from, {
      callback: (error, msg) => {
        const batch = this.decode(from, error, msg);
        if (batch === undefined) return;
        for (const packet of batch.packets) for (const handler of this.handlers) this.guard(() => handler(packet));
      },
    });
  }

  send(packet: LockPacket): void {
    (this.batchers[rackOfLock(packet.lock, this.racks)] as PacketBatcher).add(packet);
  }

  onPacket(handler: (packet: LockPacket) => void): () => void {
    // Wrapped so the same function registered twice gets two independent registrations.
    const registration = (packet: LockPacket) => handler(packet);
    this.handlers.add(registration);
    return () => this.handlers.delete(registration);
  }

  /** Publishes what this turn has batched so far. */
  flush(): void {
    for (const batcher of this.batchers) batcher.flush();
  }

  /** Sends what is batched and stops receiving. */
  close(): void {
    this.flush();
    this.subscription.unsubscribe();
    this.handlers.clear();
  }
}

/** Whether a decoded batch may enter, given the epoch stamped in its payload (undefined: none) and its message. */
export type BatchAdmit = (epoch: bigint | undefined, msg: Msg) => boolean;

export interface SwitchIngressOptions extends LinkCommon {
  readonly rack: number;
  /** Each decoded packet, with the machine whose link carried it. */
  readonly onPacket: (packet: LockPacket, fromMachine: NodeId) => void;
  /**
   * The switch's recovery fence, asked once per batch with the stamp the decode read: the frame is
   * parsed once, not once for the fence and again for the packets. Absent: every batch enters.
   */
  readonly admit?: BatchAdmit;
}

/** The switch-dataplane side of a rack: packets in from every machine, egress out per machine. */
export class SwitchIngress extends PacketLinkBase {
  readonly rack: number;
  private readonly batchers = new Map<NodeId, PacketBatcher>();
  private readonly subscription: Subscription;

  constructor(options: SwitchIngressOptions) {
    super(options);
    this.rack = options.rack;
    const into = options.subjects.switchIn(options.rack);
    this.subscription = this.nc.subscribe(into, {
      callback: (error, msg) => {
        const batch = this.decode(into, error, msg, options.admit);
        if (batch === undefined) return;
        for (const packet of batch.packets) this.guard(() => options.onPacket(packet, batch.sender));
      },
    });
  }

  /** Queues a packet for `machine`; packets for one machine in one turn leave as one batch. */
  egress(machine: NodeId, packet: LockPacket): void {
    let batcher = this.batchers.get(machine);
    if (batcher === undefined) {
      const subject = this.subjects.nodePackets(machine);
      batcher = new PacketBatcher((packets) => this.publishBatch(subject, packets, this.rack), this.maxBatchPackets);
      this.batchers.set(machine, batcher);
    }
    batcher.add(packet);
  }

  flush(): void {
    for (const batcher of this.batchers.values()) batcher.flush();
  }

  close(): void {
    this.flush();
    this.subscription.unsubscribe();
  }
}
