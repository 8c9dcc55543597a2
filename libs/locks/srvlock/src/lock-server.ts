import type { NodeService, NodeServiceContext } from '@lockfabric/locks-common';
import type { LockId, LockMode, LockPacket, Message, NodeId, SpanContextRef } from '@lockfabric/ports';
import { LockTable } from './lock-table.js';
import type { LockRequest, LockTableOptions, RequestChannel } from './lock-table.js';
import { dropDeadMachine } from './recovery.js';
import { FLAG_CANCEL, LocalOp, encodeNodes, localOp, modeOf } from './wire.js';

export interface LockServerOptions extends LockTableOptions {
  /** Whether this node manages locks (SrvLock: only the server node); every node answers topology queries. */
  readonly managesLocks: boolean;
}

export interface LockServerStats {
  readonly packetRequests: number;
  readonly localRequests: number;
  readonly duplicates: number;
  /** Requests ignored because their machine was declared dead (fenced). */
  readonly fenced: number;
  /** Holds and queued requests of dead machines dropped by recovery. */
  readonly droppedDead: number;
}

/**
 * A node's lock-manager service: a {@link LockTable} fed by ACQUIRE/RELEASE packets addressed to
 * this node (replies are GRANT/ACK packets through the switch) and by node-local mailbox requests
 * (ParLock's local path: no packet). Requests are deduplicated per task by request id, so a
 * retransmitted or duplicated ACQUIRE never becomes a second holding.
 */
export class LockServer implements NodeService {
  readonly table: LockTable;
  private readonly node: NodeId;
  private readonly unsubscribe: (() => void) | undefined;
  private readonly unsubscribeFailures: (() => void) | undefined;
  /**
   * Machines declared dead during this run. A run's clients live in one incarnation of their
   * node (a restarted node joins the next run, which has a new server), so the node id fences.
   */
  private readonly dead = new Set<NodeId>();
  private readonly stopper = new AbortController();
  /** Highest request id seen per task (`machine/task`); a task's rids only grow. */
  private readonly newestRid = new Map<string, number>();
  private stats = { packetRequests: 0, localRequests: 0, duplicates: 0, fenced: 0, droppedDead: 0 };

  constructor(
    private readonly context: NodeServiceContext,
    private readonly options: LockServerOptions,
  ) {
    this.table = new LockTable(options);
    this.node = context.ports.self.node;
    const port = context.ports.switchPort;
    if (options.managesLocks && port) this.unsubscribe = port.onPacket((packet) => this.onPacket(packet));
    if (options.managesLocks) this.unsubscribeFailures = context.failures?.onComputeNodeFailed((node) => this.onMachineFailed(node));
    void this.serveMailbox();
  }

  get counters(): LockServerStats {
    return { ...this.stats };
  }

  /** Machines this server has fenced after a failure notice. */
  get deadMachines(): readonly NodeId[] {
    return [...this.dead];
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribeFailures?.();
    this.stopper.abort('lock server stopped');
  }

  /**
   * Recovery after the coordinator declared `machine` dead: its holds and queued requests are
   * dropped, the survivors granted as a result are answered, and its later requests are ignored
   * (a paused process that resumes must not be granted, nor release what recovery handed on).
   */
  onMachineFailed(machine: NodeId): void {
    if (machine === this.node || this.dead.has(machine)) return;
    this.dead.add(machine);
    const locks = this.table.lockIds();
    const before = this.countOf(machine, locks);
    for (const granted of dropDeadMachine(this.table, machine, locks)) this.reply('grant', granted);
    this.stats.droppedDead += before;
  }

  private countOf(machine: NodeId, locks: readonly LockId[]): number {
    let n = 0;
    for (const lock of locks) for (const r of [...this.table.holders(lock), ...this.table.waiters(lock)]) if (r.machine === machine) n++;
    return n;
  }

  private onPacket(packet: LockPacket): void {
    if (packet.dst !== this.node) return;
    if (packet.type !== 'acquire' && packet.type !== 'release') return;
    if (this.dead.has(packet.machine)) {
      this.stats.fenced++;
      return;
    }
    this.stats.packetRequests++;
    const request = { lock: packet.lock, mode: packet.mode, machine: packet.machine, task: packet.task, rid: packet.seq, channel: 'packet' as const };
    if (packet.type === 'acquire') this.acquire(request);
    else this.release(request, (packet.flags & FLAG_CANCEL) !== 0, packet.trace);
  }

  private async serveMailbox(): Promise<void> {
    const { mailbox } = this.context.ports;
    while (!this.stopper.signal.aborted) {
      const message = await mailbox.receive(() => true, { signal: this.stopper.signal });
      if (!message) return;
      this.onMessage(message);
    }
  }

  private onMessage(message: Message): void {
    const op = localOp(message);
    if (op === LocalOp.topologyQuery) {
      this.context.ports.mailbox.send({ kind: 'custom', to: message.from, lock: 0, data: encodeNodes(this.context.computeNodes) });
      return;
    }
    if (!this.options.managesLocks || message.value === undefined) return;
    if (op !== LocalOp.acquire && op !== LocalOp.release && op !== LocalOp.cancel) return;
    if (this.dead.has(message.from.node)) {
      this.stats.fenced++;
      return;
    }
    this.stats.localRequests++;
    const request: LockRequest = {
      lock: message.lock,
      mode: modeOf(message.data?.[1]),
      machine: message.from.node,
      task: message.from.client,
      rid: Number(message.value),
      channel: 'local',
    };
    if (op === LocalOp.acquire) this.acquire(request);
    else this.release(request, op === LocalOp.cancel, message.trace);
  }

  private acquire(request: LockRequest): void {
    const task = `${request.machine}/${request.task}`;
    const newest = this.newestRid.get(task) ?? -1;
    const result = request.rid > newest ? this.table.acquire(request) : this.table.acquire(request, true);
    if (request.rid > newest) this.newestRid.set(task, request.rid);
    if (result.outcome === 'already-held') this.reply('grant', request);
    if (result.outcome === 'stale' || result.outcome === 'already-held' || result.outcome === 'already-queued') this.stats.duplicates++;
    for (const granted of result.granted) this.reply('grant', granted);
  }

  private release(request: LockRequest, cancel: boolean, trace: SpanContextRef | undefined): void {
    const task = `${request.machine}/${request.task}`;
    // A cancel that overtook its ACQUIRE fences it: the late ACQUIRE is then stale.
    if (cancel && request.rid > (this.newestRid.get(task) ?? -1)) this.newestRid.set(task, request.rid);
    const granted = this.table.release(request.lock, request.machine, request.task, request.rid);
    this.reply('ack', request, trace);
    for (const next of granted) this.reply('grant', next, trace);
  }

  private reply(type: 'grant' | 'ack', to: LockRequest, trace?: SpanContextRef): void {
    if (to.channel === 'local') this.replyLocal(type, to, trace);
    else this.replyPacket(type, to.lock, to.mode, to.machine, to.task, to.rid, trace);
  }

  private replyPacket(type: 'grant' | 'ack', lock: LockId, mode: LockMode, machine: NodeId, task: number, rid: number, trace?: SpanContextRef): void {
    const packet: LockPacket = { type, lock, machine: this.node, task, mode, incarnation: 0, seq: rid, flags: 0, dst: machine };
    this.context.ports.switchPort?.send(trace ? { ...packet, trace } : packet);
  }

  private replyLocal(type: 'grant' | 'ack', to: LockRequest, trace?: SpanContextRef): void {
    const message = {
      kind: type === 'grant' ? ('grant' as const) : ('custom' as const),
      to: { node: to.machine, client: to.task },
      lock: to.lock,
      value: BigInt(to.rid),
      data: Uint8Array.of(type === 'grant' ? LocalOp.grant : LocalOp.ack),
    };
    this.context.ports.mailbox.send(trace ? { ...message, trace } : message);
  }
}

export type { RequestChannel };
