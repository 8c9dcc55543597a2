import { clientKey } from '@lockfabric/ports';
import type { ClientAddress, Mailbox, Message, ReceiveOptions } from '@lockfabric/ports';
import type { Scheduler } from './scheduler.js';

interface Waiter {
  readonly match: (message: Message) => boolean;
  readonly resolve: (message: Message | undefined) => void;
}

interface Inbox {
  readonly queue: Message[];
  readonly waiters: Set<Waiter>;
}

export interface MailboxHubOptions {
  /** One-way delivery delay of a message, before jitter. */
  readonly latencyNs: number;
  /** Extra delay drawn per message from [0, jitterNs); reorders messages. */
  readonly jitterNs: number;
  /** Messages queued per client before new ones are dropped (and counted). */
  readonly queueBound: number;
  readonly random: { next(): number };
}

/** Client-to-client SENDs of an in-memory cluster, delivered through the scheduler. */
export class InMemoryMailboxHub {
  private readonly inboxes = new Map<string, Inbox>();
  dropped = 0;
  delivered = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly options: MailboxHubOptions,
  ) {}

  mailbox(self: ClientAddress): Mailbox {
    const inbox = this.inbox(self);
    return {
      self,
      send: (message) => this.send({ ...message, from: self }),
      receive: (match, options) => this.receive(inbox, match, options),
    };
  }

  private inbox(address: ClientAddress): Inbox {
    const key = clientKey(address);
    let inbox = this.inboxes.get(key);
    if (!inbox) {
      inbox = { queue: [], waiters: new Set() };
      this.inboxes.set(key, inbox);
    }
    return inbox;
  }

  private send(message: Message): void {
    const jitter = this.options.jitterNs > 0 ? Math.floor(this.options.random.next() * this.options.jitterNs) : 0;
    const target = this.inbox(message.to);
    this.scheduler.at(this.scheduler.nowNs() + this.options.latencyNs + jitter, () => this.deliver(target, message));
  }

  private deliver(inbox: Inbox, sent: Message): void {
    const message: Message = { ...sent, receivedNs: this.scheduler.nowNs() };
    for (const waiter of inbox.waiters) {
      if (waiter.match(message)) {
        inbox.waiters.delete(waiter);
        this.delivered++;
        waiter.resolve(message);
        return;
      }
    }
    if (inbox.queue.length >= this.options.queueBound) {
      this.dropped++;
      return;
    }
    this.delivered++;
    inbox.queue.push(message);
  }

  private receive(inbox: Inbox, match: (message: Message) => boolean, options: ReceiveOptions = {}): Promise<Message | undefined> {
    const index = inbox.queue.findIndex(match);
    if (index >= 0) return Promise.resolve(inbox.queue.splice(index, 1)[0]);
    if (options.signal?.aborted) return Promise.resolve(undefined);
    if (options.deadlineNs !== undefined && options.deadlineNs <= this.scheduler.nowNs()) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const finish = (message: Message | undefined) => {
        if (!inbox.waiters.delete(waiter) && message === undefined) return;
        options.signal?.removeEventListener('abort', onAbort);
        resolve(message);
      };
      const waiter: Waiter = { match, resolve: finish };
      const onAbort = () => finish(undefined);
      inbox.waiters.add(waiter);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.deadlineNs !== undefined) this.scheduler.at(options.deadlineNs, () => finish(undefined));
    });
  }
}
