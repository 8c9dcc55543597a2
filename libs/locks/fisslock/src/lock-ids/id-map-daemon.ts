import type { Mailbox, Message, NodeId } from '@lockfabric/ports';
import { ID_MAP_ERROR, ID_MAP_OP, decodeRequest, isIdMapMessage, mapError, mapReply } from './id-map-wire.js';
import type { LockIdTable } from './lock-id-table.js';

export interface LockIdMapDaemonStats {
  /** Well-formed requests answered with a lid. */
  requests: number;
  /** Of those, ids mapped for the first time, and how many of them got an out-of-range lid. */
  fresh: number;
  outOfRange: number;
  /** New ids refused because the table was full. */
  refusedFull: number;
  /** Requests answered with an error because they were malformed or reached a node without the map. */
  malformed: number;
  notHost: number;
  /** Replies or unknown messages of the channel that reached the service: counted, never answered. */
  ignored: number;
}

export interface LockIdMapDaemonOptions {
  /** This node's service mailbox, narrowed to the id-map channel. */
  readonly mailbox: Mailbox;
  readonly machine: NodeId;
  /** The node hosting the map (this one when `table` is set). */
  readonly host: NodeId;
  /** The map, on its host; other nodes answer requests that reach them with an error naming the host. */
  readonly table?: LockIdTable;
}

/**
 * The id-map RPC daemon (spec §6.5, table "ID-mapping RPC daemon | any server"). It serves one
 * request at a time straight from the mailbox: a lookup is one hash-map step, so it keeps no queue
 * of its own, and the only backlog is the mailbox's bounded inbox (overflow drops the newest
 * message; the client resends). A bad request is answered with an error and counted; nothing a
 * request carries can throw here.
 */
export class LockIdMapDaemon {
  readonly stats: LockIdMapDaemonStats = { requests: 0, fresh: 0, outOfRange: 0, refusedFull: 0, malformed: 0, notHost: 0, ignored: 0 };
  private readonly stopper = new AbortController();
  private readonly served: Promise<void>;

  constructor(private readonly options: LockIdMapDaemonOptions) {
    this.served = this.serve();
  }

  get table(): LockIdTable | undefined {
    return this.options.table;
  }

  /** Stops serving; requests that arrive later stay unanswered (clients see an unreachable map). */
  async stop(): Promise<void> {
    this.stopper.abort();
    await this.served;
  }

  private async serve(): Promise<void> {
    while (!this.stopper.signal.aborted) {
      const message = await this.options.mailbox.receive(isIdMapMessage, { signal: this.stopper.signal });
      if (!message) return;
      this.handle(message);
    }
  }

  /** Answers one message of the id-map channel; unknown ops of its range are malformed requests. */
  private handle(message: Message): void {
    const op = message.data?.[0];
    // replies and errors are for clients; answering them could start a loop between two services
    if (op === ID_MAP_OP.reply || op === ID_MAP_OP.error) {
      this.stats.ignored++;
      return;
    }
    const decoded = decodeRequest(message);
    const { mailbox, table, host, machine } = this.options;
    if (!decoded.ok) {
      this.stats.malformed++;
      mailbox.send(mapError(message.from, ID_MAP_ERROR.malformed, decoded.detail, decoded.appLockId));
      return;
    }
    if (!table) {
      this.stats.notHost++;
      mailbox.send(mapError(message.from, ID_MAP_ERROR.notHost, `node ${machine} does not host the id map; node ${host} does`, decoded.appLockId));
      return;
    }
    const outcome = table.map(decoded.appLockId);
    if (!outcome) {
      this.stats.refusedFull++;
      mailbox.send(mapError(message.from, ID_MAP_ERROR.full, `the id map holds its maximum of ${table.maxEntries} ids`, decoded.appLockId));
      return;
    }
    this.stats.requests++;
    if (outcome.fresh) {
      this.stats.fresh++;
      if (!table.onSwitch(outcome.lid)) this.stats.outOfRange++;
    }
    mailbox.send(mapReply(message.from, decoded.appLockId, outcome.lid));
  }
}
