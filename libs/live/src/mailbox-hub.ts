import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { ClientAddress, Clock, Mailbox, Message, NodeId, ReceiveOptions } from '@lockfabric/ports';
import { Stopper, clientKey, MalformedInputError, errorMessage } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { decodeMessage, encodeMessage } from '@lockfabric/wire';
import { consoleLogger, type Logger } from './logger.js';
import { MalformedInputCounter } from './malformed-input.js';
import { RateLimitedLog } from './rate-limited-log.js';
import type { Subjects } from './subjects.js';
import { traceFromHeaders, tracePublishOptions } from './trace-header.js';

export interface MailboxHubOptions {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  /** The compute node this hub serves. */
  readonly node: NodeId;
  /** Clock of `receive` deadlines; real time by default. */
  readonly clock?: Clock;
  /** Messages queued per client before new ones are dropped. */
  readonly queueBound?: number;
  /** Clients a hub keeps queues for; protects memory from messages naming arbitrary clients. */
  readonly maxClients?: number;
  readonly logger?: Logger;
  readonly malformed?: MalformedInputCounter;
}

export interface MailboxHubStats {
  /** Messages published to other nodes. */
  readonly sent: number;
  /** Messages between clients of this node, delivered without NATS. */
  readonly deliveredLocally: number;
  /** Messages decoded from this node's subject. */
  readonly received: number;
  /** Messages dropped because the receiving client's queue was full (policy: drop newest). */
  readonly droppedQueueFull: number;
  /** Messages dropped because the hub already serves `maxClients` clients. */
  readonly droppedTooManyClients: number;
  /** Messages that could not be published (connection closed). */
  readonly sendFailures: number;
}

interface Waiter {
  readonly match: (message: Message) => boolean;
  /** Hands over a message, or undefined when the hub closes. */
  readonly deliver: (message: Message | undefined) => void;
}

/** One client's inbox: queued messages, oldest first, and receivers waiting for a match. */
class ClientQueue {
  readonly messages: Message[] = [];
  readonly waiters: Waiter[] = [];
}

/**
 * The Mailbox port over NATS for the clients of one compute node. A SEND to another node is
 * published to that node's `nodeMessages` subject (with W3C trace context in a NATS header); the
 * hub subscribes to its own subject, decodes, and hands each message to the addressed client's
 * bounded queue. SENDs between clients of this node never touch NATS.
 */
export class MailboxHub {
  readonly node: NodeId;
  private readonly nc: NatsConnection;
  private readonly subject: string;
  private readonly subjects: Subjects;
  private readonly clock: Clock;
  private readonly queueBound: number;
  private readonly maxClients: number;
  private readonly malformed: MalformedInputCounter;
  private readonly overflowLog: RateLimitedLog;
  private readonly clients = new Map<number, ClientQueue>();
  private readonly subscription: Subscription;
  private closed = false;
  private counters = { sent: 0, deliveredLocally: 0, received: 0, droppedQueueFull: 0, droppedTooManyClients: 0, sendFailures: 0 };

  constructor(options: MailboxHubOptions) {
    this.nc = options.nc;
    this.node = options.node;
    this.subjects = options.subjects;
    this.subject = options.subjects.nodeInbox(options.node);
    this.clock = options.clock ?? new RealClock();
    this.queueBound = options.queueBound ?? 1024;
    this.maxClients = options.maxClients ?? 65_536;
    const logger = options.logger ?? consoleLogger;
    this.malformed = options.malformed ?? new MalformedInputCounter({ logger, clock: this.clock });
    this.overflowLog = new RateLimitedLog(logger, this.clock);
    this.subscription = this.nc.subscribe(this.subject, { callback: (error, msg) => this.onNats(error, msg) });
  }

  /** The Mailbox of one client of this node. */
  mailbox(client: number): Mailbox {
    const self: ClientAddress = { node: this.node, client };
    return {
      self,
      send: (message) => this.send({ ...message, from: self }),
      receive: (match, options) => this.receive(client, match, options),
    };
  }

  stats(): MailboxHubStats {
    return { ...this.counters };
  }

  /** Messages waiting in a client's queue. */
  queued(client: number): number {
    return this.clients.get(client)?.messages.length ?? 0;
  }

  /** Stops receiving; waiting receives resolve undefined, as if their deadline had passed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.subscription.unsubscribe();
    for (const queue of this.clients.values()) {
      for (const waiter of queue.waiters.splice(0)) waiter.deliver(undefined);
    }
  }

  private send(message: Message): void {
    if (message.to.node === this.node) {
      this.counters.deliveredLocally++;
      // A copy, so sender and receiver never share a mutable buffer — as over the network.
      this.deliver(message.data === undefined ? message : { ...message, data: new Uint8Array(message.data) });
      return;
    }
    try {
      this.nc.publish(this.subjects.nodeMessages(message.to.node, this.node), encodeMessage(message), tracePublishOptions(message.trace));
      this.counters.sent++;
    } catch (error) {
      // The port promises nothing about delivery; a closed connection loses the message, counted.
      this.counters.sendFailures++;
      this.overflowLog.warn(`mailbox node ${this.node}: could not send to ${clientKey(message.to)}: ${errorMessage(error)}`);
    }
  }

  private onNats(error: Error | null, msg: Msg): void {
    if (error) {
      this.overflowLog.warn(`mailbox node ${this.node}: subscription error: ${error.message}`);
      return;
    }
    let message: Message;
    try {
      message = decodeMessage(msg.data, msg.subject);
      if (message.to.node !== this.node) throw new MalformedInputError(msg.subject, `message for node ${message.to.node} arrived at node ${this.node}`);
      // The sender is the subject's last token, which the server lets only that node publish; a
      // payload naming another node is a forgery (or a bug) and is dropped.
      const sender = Number(msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
      if (message.from.node !== sender) throw new MalformedInputError(msg.subject, `message claims to be from node ${message.from.node} but was published by node ${sender}`);
    } catch (decodeError) {
      this.malformed.record(this.subject, decodeError);
      return;
    }
    this.counters.received++;
    // Decoded bytes are views of the NATS read buffer; the receiver gets bytes of its own.
    if (message.data !== undefined) message = { ...message, data: new Uint8Array(message.data) };
    if (message.trace === undefined) {
      const trace = traceFromHeaders(msg.headers);
      if (trace !== undefined) message = { ...message, trace };
    }
    this.deliver(message);
  }

  private deliver(arrived: Message): void {
    if (this.closed) return;
    // Stamped as it comes off the connection: the nearest this process has to a receive timestamp.
    const message: Message = { ...arrived, receivedNs: this.clock.nowNs() };
    const queue = this.queueOf(message.to.client);
    if (queue === undefined) {
      this.counters.droppedTooManyClients++;
      this.overflowLog.warn(`mailbox node ${this.node}: dropped a ${message.kind} for ${clientKey(message.to)}: already serving ${this.maxClients} clients`);
      return;
    }
    const index = queue.waiters.findIndex((waiter) => waiter.match(message));
    if (index >= 0) {
      const [waiter] = queue.waiters.splice(index, 1);
      waiter?.deliver(message);
      return;
    }
    if (queue.messages.length >= this.queueBound) {
      this.counters.droppedQueueFull++;
      this.overflowLog.warn(`mailbox node ${this.node}: queue of ${clientKey(message.to)} is full (${this.queueBound}); dropped a ${message.kind} from ${clientKey(message.from)}`);
      return;
    }
    queue.messages.push(message);
  }

  private queueOf(client: number): ClientQueue | undefined {
    let queue = this.clients.get(client);
    if (queue === undefined) {
      if (this.clients.size >= this.maxClients) return undefined;
      queue = new ClientQueue();
      this.clients.set(client, queue);
    }
    return queue;
  }

  private receive(client: number, match: (message: Message) => boolean, options: ReceiveOptions = {}): Promise<Message | undefined> {
    const queue = this.queueOf(client);
    if (queue === undefined) return Promise.reject(new RangeError(`mailbox node ${this.node} already serves ${this.maxClients} clients`));
    const index = queue.messages.findIndex(match);
    if (index >= 0) return Promise.resolve(queue.messages.splice(index, 1)[0]);
    const { signal, deadlineNs } = options;
    // The port's contract, as on every substrate: deadline and abort both resolve `undefined`.
    if (signal?.aborted) return Promise.resolve(undefined);
    if (this.closed || (deadlineNs !== undefined && deadlineNs <= this.clock.nowNs())) return Promise.resolve(undefined);

    return new Promise((resolve) => {
      const timer = new Stopper();
      const settle = () => {
        timer.stop();
        signal?.removeEventListener('abort', onAbort);
        const at = queue.waiters.indexOf(waiter);
        if (at >= 0) queue.waiters.splice(at, 1);
      };
      const waiter: Waiter = {
        match,
        deliver: (message) => {
          settle();
          resolve(message);
        },
      };
      const onAbort = () => {
        settle();
        resolve(undefined);
      };
      queue.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (deadlineNs !== undefined) {
        this.clock.sleep(deadlineNs - this.clock.nowNs(), timer).then(
          () => {
            settle();
            resolve(undefined);
          },
          () => {}, // aborted: the message or the caller's signal came first
        );
      }
    });
  }
}
