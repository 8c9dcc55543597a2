import { AcquireDeadline, AcquireSpan, BoundedMap, BoundedSet, LOCK_ATTR } from '@lockfabric/locks-common';
import { FabricAccessError, Stopper, TableLostError, clientKey } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, LockPacket, Message, NodeId, SpanContextRef } from '@lockfabric/ports';
import { FLAG_CANCEL, FLAG_CONTINUE, FLAG_SWITCH, LocalOp, decodeNodes, localOp, modeCode, replyIncarnation, serviceAddress } from './wire.js';

/** Why a wait's timer was stopped (its promise's rejection is caught where it is made). */
const WAIT_OVER = 'wait over';

/**
 * Where a lock's requests go: a packet to a lock manager's node (through the switch), or a mailbox
 * message to a node service: this node's own manager, or `node`'s (the two-sided baselines' memory-node server).
 */
export type LockRoute = { readonly kind: 'packet'; readonly dst: NodeId } | { readonly kind: 'local'; readonly node?: NodeId };

export interface ServerLockClientConfig {
  readonly protocol: string;
  /** Resend an unanswered request after this long (requests are idempotent at the manager). */
  readonly retransmitNs: number;
  /** Whether unanswered ACQUIREs are resent (NetLock's switch recognises a repeat; its old-switch mutant does not). */
  readonly retransmitAcquire: boolean;
  /** Attempts at a RELEASE or cancel before giving up with FabricAccessError. */
  readonly maxAttempts: number;
  /** Backoff bound after a push-back from a full switch queue (NetLock). */
  readonly pushBackNs: number;
  /** When set, the push-back bound doubles per retry of one acquire up to this cap (truncated exponential backoff). */
  readonly pushBackCapNs?: number;
  /**
   * Failover (SrvLock, ParLock): when a request goes unanswered the client asks its node's service
   * which compute nodes were declared dead and routes again; the node's service is told of every
   * hold granted by another node (and of its release), so it can report it to a new home.
   */
  readonly failover?: boolean;
  /** Where `lock`'s requests go; `dead`: compute nodes declared dead so far (as this client knows). */
  route(lock: LockId, computeNodes: readonly NodeId[], self: NodeId, dead: ReadonlySet<NodeId>): LockRoute;
  /** Whether `route` needs the compute nodes (asked once of this node's service); default true. */
  readonly needsTopology?: boolean;
  /** Appended to every mailbox request, so the right service among those sharing a mailbox takes it. */
  readonly serviceTag?: number;
  /**
   * This run's epoch, stamped on every mailbox request (0 or absent: none). A server that outlives
   * runs starts afresh at a newer epoch and ignores older ones; replies of another run are not taken.
   */
  readonly runEpoch?: number;
  /**
   * The server stamps its incarnation on mailbox replies and may restart empty (the memory-node
   * lock managers): a grant from a table already lost is refused (TABLE_LOST), and a release that a
   * later incarnation than its grant's acknowledges ends TABLE_LOST (the hold ended with the table).
   */
  readonly serverIncarnations?: boolean;
}

export interface ServerGrant extends Grant {
  readonly rid: number;
  readonly route: LockRoute;
  /** Granted by the switch (NetLock hot lock): released to the switch without acknowledgement. */
  readonly viaSwitch: boolean;
  /** The server incarnation that granted it (`serverIncarnations` only). */
  readonly incarnation?: number;
}

interface Reply {
  readonly type: 'grant' | 'ack' | 'push-back';
  readonly flags: number;
  /** Incarnation of the server that sent it (0: not stamped). */
  readonly incarnation: number;
  readonly trace?: SpanContextRef;
}

/** Per-client packet and message counts, for the "packets per uncontended acquire" tests. */
export interface ClientTraffic {
  packetsSent: number;
  packetsReceived: number;
  localMessages: number;
}

/** Given-up switch-queued requests a client remembers (see ServerLockClient.abandoned). */
export const ABANDONED_MAX = 4_096;

/** Replies a client keeps before it collects them (see ServerLockClient.replies). */
export const REPLIES_MAX = 1_024;

/**
 * Client of server lock managers: ACQUIRE → GRANT, RELEASE → ACK, each keyed by a per-client
 * request id. Timeouts and aborts withdraw the request (cancel), so the manager never keeps a
 * holder nobody will release. Uncontended: 1 packet out + 1 in per acquire, the same per release;
 * on the local route (ParLock's home node) no packet at all.
 */
export class ServerLockClient implements LockClient<ServerGrant> {
  readonly traffic: ClientTraffic = { packetsSent: 0, packetsReceived: 0, localMessages: 0 };
  private nextRid = 1;
  private computeNodes: readonly NodeId[] | undefined;
  /** Compute nodes declared dead, as last heard from this node's service (failover only; only grows). */
  private readonly dead = new Set<NodeId>();
  /**
   * Replies by request id until the waiting call collects them. A late duplicate (an ACK of a release
   * already acknowledged, a GRANT answered after a give-up) is never collected: the bound forgets the
   * oldest. A client has a request or two outstanding at a time, so only a flood of strays evicts a live one.
   */
  private readonly replies = new BoundedMap<number, Reply>(REPLIES_MAX);
  private readonly waiters = new Map<number, () => void>();
  /**
   * Requests given up while a switch queue still holds them: released when their grant arrives.
   * Bounded: one whose ACQUIRE was lost is never granted and would stay forever; only a client with
   * more than ABANDONED_MAX such requests forgets the oldest.
   */
  private readonly abandoned = new BoundedSet<number>(ABANDONED_MAX);
  /** Requests being withdrawn: a switch grant for one of them is released at once (the cancel cannot dequeue it). */
  private readonly withdrawing = new Set<number>();
  /** Newest server incarnation heard from each node (`serverIncarnations` only). */
  private readonly newestIncarnation = new Map<NodeId, number>();

  constructor(
    private readonly ports: ClientPorts,
    private readonly config: ServerLockClientConfig,
  ) {
    ports.switchPort?.onPacket((packet) => this.onPacket(packet));
  }

  /** Replies received and not yet collected (bounded by REPLIES_MAX). */
  get uncollectedReplies(): number {
    return this.replies.size;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<ServerGrant> {
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, this.config.protocol, lock, mode, clientKey(this.ports.self));
    const rid = this.nextRid++;
    let sent = false;
    let route: LockRoute | undefined;
    try {
      deadline.check();
      const nodes = this.config.needsTopology === false ? [] : await this.topology(deadline, options?.signal);
      route = this.config.route(lock, nodes, this.ports.self.node, this.dead);
      for (;;) {
        this.sendRequest(route, 'acquire', lock, mode, rid, 0, op.span.context);
        sent = true;
        const reply = await this.awaitReply(route, rid, deadline, options?.signal, this.config.retransmitAcquire);
        if (reply?.type === 'grant') {
          const incarnation = this.config.serverIncarnations ? this.grantIncarnation(lock, route, reply) : undefined;
          if (reply.trace) op.span.addLink(reply.trace, { 'lockfabric.link': 'handover' });
          op.granted();
          if (this.config.failover && route.kind === 'packet') this.noteToService(LocalOp.noteHeld, lock, mode, rid);
          return { lock, mode, rid, route, viaSwitch: (reply.flags & FLAG_SWITCH) !== 0, ...(incarnation !== undefined ? { incarnation } : {}) };
        }
        deadline.check();
        if (!reply) route = await this.reroute(lock, route, deadline.atNs, options?.signal);
        op.retries++;
        if (reply?.type === 'push-back') await deadline.pause(1 + this.pushBackDraw(op.retries));
      }
    } catch (error) {
      if (sent && route) await this.withdrawBriefly(route, lock, mode, rid);
      op.failed(error);
      throw error;
    }
  }

  async release(grant: ServerGrant): Promise<void> {
    const span = this.ports.trace.startSpan('lock.handover', {
      attributes: { [LOCK_ATTR.protocol]: this.config.protocol, [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: clientKey(this.ports.self) },
    });
    try {
      if (grant.viaSwitch) {
        this.sendRequest(grant.route, 'release', grant.lock, grant.mode, grant.rid, 0, span.context);
        return;
      }
      const ack = await this.reliably(grant.route, 'release', grant.lock, grant.mode, grant.rid, 0, span.context).finally(() => {
        if (this.config.failover && grant.route.kind === 'packet') this.noteToService(LocalOp.noteReleased, grant.lock, grant.mode, grant.rid);
      });
      // Acknowledged by a server that started after the grant: the hold ended with the old table.
      if (grant.incarnation !== undefined && ack.incarnation !== grant.incarnation) {
        throw new TableLostError(grant.lock, `its lock server restarted (granted by incarnation ${grant.incarnation}, released on ${ack.incarnation})`);
      }
    } catch (error) {
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  /**
   * Withdraws, waiting at most one retransmit interval: a manager that answers is done by then,
   * and one that is gone (ParLock: the lock's home node died) must not hold the caller past its
   * timeout. The withdrawal goes on in the background up to `maxAttempts`.
   */
  private async withdrawBriefly(route: LockRoute, lock: LockId, mode: LockMode, rid: number): Promise<void> {
    const withdrawal = this.withdraw(route, lock, mode, rid);
    const stop = new Stopper();
    const patience = this.ports.clock.sleep(this.config.retransmitNs, stop).catch(() => undefined);
    await Promise.race([withdrawal, patience]);
    stop.stop(WAIT_OVER);
  }

  /**
   * The incarnation of a grant's server, unless that server's table is already known lost: a later
   * incarnation answered this client, or the memory node restarted since this acquire began
   * (`tables`) and the grant is not from the new one. Such a grant (held up past the restart by a
   * pause or a cut) protects nothing, since the new table may grant the lock to anyone.
   */
  private grantIncarnation(lock: LockId, route: LockRoute, reply: Reply): number {
    const node = route.kind === 'local' ? (route.node ?? this.ports.self.node) : route.dst;
    const newest = this.newestIncarnation.get(node) ?? 0;
    const tables = this.ports.tables;
    const pinned = tables?.incarnations?.().get(node);
    if (reply.incarnation < newest || (tables?.lost() && (pinned === undefined || reply.incarnation <= pinned))) {
      throw new TableLostError(lock, `the lock server on node ${node} restarted before its grant (incarnation ${reply.incarnation}) arrived`);
    }
    return reply.incarnation;
  }

  /** A random pause before retry `retries` after a push-back (or busy) answer. */
  private pushBackDraw(retries: number): number {
    const cap = this.config.pushBackCapNs;
    const bound = cap === undefined ? this.config.pushBackNs : Math.min(cap, this.config.pushBackNs * 2 ** Math.min(retries, 30));
    return bound > 0 ? this.ports.random.int(bound) : 0;
  }

  /** Cancels a request that timed out or was aborted; a switch-queued one is released when granted. */
  private async withdraw(route: LockRoute, lock: LockId, mode: LockMode, rid: number): Promise<void> {
    const early = this.replies.get(rid);
    if (early?.type === 'grant' && (early.flags & FLAG_SWITCH) !== 0) {
      this.replies.delete(rid);
      this.sendRequest(route, 'release', lock, mode, rid, 0);
      return;
    }
    this.withdrawing.add(rid);
    const reply = await this.reliably(route, 'release', lock, mode, rid, FLAG_CANCEL).catch(() => undefined);
    this.withdrawing.delete(rid);
    if (reply && (reply.flags & FLAG_SWITCH) !== 0) this.abandoned.add(rid);
  }

  /** Sends until acknowledged (an ACK for this rid), up to `maxAttempts`. */
  private async reliably(route: LockRoute, type: 'release', lock: LockId, mode: LockMode, rid: number, flags: number, trace?: SpanContextRef): Promise<Reply> {
    this.replies.delete(rid);
    let to = route;
    for (let attempt = 0; attempt < this.config.maxAttempts; attempt++) {
      this.sendRequest(to, type, lock, mode, rid, flags, trace);
      const reply = await this.awaitOne(to, rid, this.ports.clock.nowNs() + this.config.retransmitNs, undefined, 'ack');
      if (reply) return reply;
      to = await this.reroute(lock, to, this.ports.clock.nowNs() + this.config.retransmitNs, undefined);
    }
    throw new FabricAccessError('unreachable', `${this.config.protocol}: no acknowledgement of ${type} of lock ${lock} after ${this.config.maxAttempts} attempts`);
  }

  /** Waits for this rid's grant or push-back; resends the ACQUIRE every `retransmitNs` when asked to. */
  private async awaitReply(route: LockRoute, rid: number, deadline: AcquireDeadline, signal: AbortSignal | undefined, retransmit: boolean): Promise<Reply | undefined> {
    const untilNs = retransmit ? Math.min(deadline.atNs, this.ports.clock.nowNs() + this.config.retransmitNs) : deadline.atNs;
    return this.awaitOne(route, rid, untilNs, signal, 'grant');
  }

  private async awaitOne(route: LockRoute, rid: number, untilNs: number, signal: AbortSignal | undefined, want: 'grant' | 'ack'): Promise<Reply | undefined> {
    if (route.kind === 'local') {
      const wanted = (op: number | undefined) => op === (want === 'grant' ? LocalOp.grant : LocalOp.ack) || (want === 'grant' && op === LocalOp.busy);
      const run = BigInt(this.config.runEpoch ?? 0);
      const message = await this.ports.mailbox.receive((m) => m.value === BigInt(rid) && (m.epoch ?? 0n) === run && wanted(localOp(m)), {
        deadlineNs: untilNs,
        ...(signal ? { signal } : {}),
      });
      if (!message) return undefined;
      const type = localOp(message) === LocalOp.busy ? 'push-back' : want;
      const incarnation = replyIncarnation(message.data);
      const node = message.from.node;
      if (incarnation > (this.newestIncarnation.get(node) ?? 0)) this.newestIncarnation.set(node, incarnation);
      return message.trace ? { type, flags: 0, incarnation, trace: message.trace } : { type, flags: 0, incarnation };
    }
    const accept = (): Reply | undefined => {
      const reply = this.replies.get(rid);
      if (reply && (reply.type === want || (want === 'grant' && reply.type === 'push-back'))) {
        this.replies.delete(rid);
        return reply;
      }
      return undefined;
    };
    const ready = accept();
    if (ready) return ready;
    const waitNs = untilNs - this.ports.clock.nowNs();
    if (waitNs <= 0 || signal?.aborted) return undefined;
    // One per wait: a Stopper, which dispatches as an AbortController would, minus its EventTarget.
    const wake = new Stopper();
    const onAbort = () => wake.stop(WAIT_OVER);
    signal?.addEventListener('abort', onAbort, { once: true });
    this.waiters.set(rid, onAbort);
    try {
      await this.ports.clock.sleep(Number.isFinite(waitNs) ? waitNs : 2 ** 52, wake);
    } catch {
      // woken by a reply or by the caller's abort
    } finally {
      this.waiters.delete(rid);
      signal?.removeEventListener('abort', onAbort);
    }
    return accept();
  }

  private onPacket(packet: LockPacket): void {
    if (packet.task !== this.ports.self.client) return;
    if (packet.type !== 'grant' && packet.type !== 'ack' && packet.type !== 'push-back') return;
    this.traffic.packetsReceived++;
    const viaSwitch = (packet.flags & FLAG_SWITCH) !== 0;
    if (packet.type === 'grant' && viaSwitch && (packet.flags & FLAG_CONTINUE) !== 0) {
      // Recirculation: hand the switch the next queue slot to check for a shared waiter.
      this.send({ type: 'notify', lock: packet.lock, machine: this.ports.self.node, task: this.ports.self.client, mode: 'shared', incarnation: packet.incarnation, seq: 0, flags: FLAG_SWITCH });
    }
    if (packet.type === 'grant' && viaSwitch && (this.abandoned.delete(packet.seq) || this.withdrawing.has(packet.seq))) {
      this.send({ type: 'release', lock: packet.lock, machine: this.ports.self.node, task: this.ports.self.client, mode: packet.mode, incarnation: 0, seq: packet.seq, flags: 0 });
      return;
    }
    this.replies.set(packet.seq, packet.trace ? { type: packet.type, flags: packet.flags, incarnation: 0, trace: packet.trace } : { type: packet.type, flags: packet.flags, incarnation: 0 });
    this.waiters.get(packet.seq)?.();
  }

  private sendRequest(route: LockRoute, type: 'acquire' | 'release', lock: LockId, mode: LockMode, rid: number, flags: number, trace?: SpanContextRef): void {
    if (route.kind === 'local') {
      this.traffic.localMessages++;
      const op = type === 'acquire' ? LocalOp.acquire : (flags & FLAG_CANCEL) !== 0 ? LocalOp.cancel : LocalOp.release;
      const data = this.config.serviceTag === undefined ? Uint8Array.of(op, modeCode(mode)) : Uint8Array.of(op, modeCode(mode), this.config.serviceTag);
      const run = this.config.runEpoch ?? 0;
      const message: Omit<Message, 'from'> = { kind: 'custom', to: serviceAddress(route.node ?? this.ports.self.node), lock, value: BigInt(rid), data, ...(run > 0 ? { epoch: BigInt(run) } : {}) };
      this.ports.mailbox.send(trace ? { ...message, trace } : message);
      return;
    }
    const packet: LockPacket = { type, lock, machine: this.ports.self.node, task: this.ports.self.client, mode, incarnation: 0, seq: rid, flags, dst: route.dst };
    this.send(trace ? { ...packet, trace } : packet);
  }

  private send(packet: LockPacket): void {
    const port = this.ports.switchPort;
    if (!port) throw new FabricAccessError('unreachable', `${this.config.protocol} needs a switch port`);
    this.traffic.packetsSent++;
    port.send(packet);
  }

  /**
   * Failover: asks this node's service which compute nodes are dead (waiting at most one
   * retransmit interval, and not past `untilNs`) and routes `lock` again; without failover the route stays.
   */
  private async reroute(lock: LockId, route: LockRoute, untilNs: number, signal: AbortSignal | undefined): Promise<LockRoute> {
    if (!this.config.failover || !this.computeNodes) return route;
    this.ports.mailbox.send({ kind: 'custom', to: serviceAddress(this.ports.self.node), lock: 0, data: Uint8Array.of(LocalOp.viewQuery) });
    const reply = await this.ports.mailbox.receive((m: Message) => localOp(m) === LocalOp.viewReply, {
      deadlineNs: Math.min(untilNs, this.ports.clock.nowNs() + this.config.retransmitNs),
      ...(signal ? { signal } : {}),
    });
    if (reply?.data) for (const node of decodeNodes(reply.data)) this.dead.add(node);
    return this.config.route(lock, this.computeNodes, this.ports.self.node, this.dead);
  }

  /** Failover: tells this node's service of a hold granted by another node, or of its end. */
  private noteToService(op: number, lock: LockId, mode: LockMode, rid: number): void {
    this.traffic.localMessages++;
    this.ports.mailbox.send({ kind: 'custom', to: serviceAddress(this.ports.self.node), lock, value: BigInt(rid), data: Uint8Array.of(op, modeCode(mode)) });
  }

  /** The cluster's compute nodes, asked once of this node's service over the mailbox. */
  private async topology(deadline: AcquireDeadline, signal: AbortSignal | undefined): Promise<readonly NodeId[]> {
    while (!this.computeNodes) {
      this.ports.mailbox.send({ kind: 'custom', to: serviceAddress(this.ports.self.node), lock: 0, data: Uint8Array.of(LocalOp.topologyQuery) });
      const reply = await this.ports.mailbox.receive((m: Message) => localOp(m) === LocalOp.topologyReply, {
        deadlineNs: Math.min(deadline.atNs, this.ports.clock.nowNs() + this.config.retransmitNs),
        ...(signal ? { signal } : {}),
      });
      if (reply?.data) this.computeNodes = decodeNodes(reply.data);
      else deadline.check();
    }
    return this.computeNodes;
  }
}
