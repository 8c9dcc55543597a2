import type { NodeService, NodeServiceContext } from '@lockfabric/locks-common';
import type { LockId, LockMode, LockPacket, Message, NodeId, SpanContextRef } from '@lockfabric/ports';
import { LockTable } from './lock-table.js';
import { requestKey } from './lock-table.js';
import type { LockRequest, LockTableOptions, RequestChannel } from './lock-table.js';
import { dropDeadMachine } from './recovery.js';
import { currentHome, nextLiveNode } from './failover.js';
import type { LockHomes } from './failover.js';
import { FLAG_CANCEL, LocalOp, encodeNodes, encodeReply, localOp, modeOf } from './wire.js';
import { ServerCpu } from './server-cpu.js';
import type { ServerCpuOptions } from './server-cpu.js';

export interface LockServerFailoverOptions extends LockHomes {
  /** Resend an unanswered RECLAIM query to a survivor after this long. */
  readonly retransmitNs: number;
  /** Test-only mutant: a new home serves moved locks at once, without collecting the survivors' holds. */
  readonly mutantServeDuringGrace?: boolean;
  /** Test-only: a survivor does not forward a release its client noted after the reclaim (the phantom-holder bug). */
  readonly mutantNoReclaimForward?: boolean;
}

export interface LockServerOptions extends LockTableOptions {
  /**
   * Whether this node manages locks (SrvLock: only the server node); every node answers topology
   * queries. With `failover` the node manages exactly the locks whose current home it is.
   */
  readonly managesLocks: boolean;
  /** Failover of a dead home's locks to the next live compute node (see README, "failover"). */
  readonly failover?: LockServerFailoverOptions;
  /**
   * Retry-on-fail (the `rpc` baseline): an acquire that cannot be granted at once is answered
   * `busy` and leaves no trace; the client tries again with the same rid.
   */
  readonly tryOnly?: boolean;
  /** Mailbox requests this server takes (several protocols' services can share one mailbox); default all. */
  readonly accepts?: (message: Message) => boolean;
  /** Charge mailbox requests to a modelled server CPU (see {@link ServerCpu}); absent: served on arrival. */
  readonly cpu?: ServerCpuOptions;
  /** Test-only mutant: mailbox requests' run epochs are ignored, so a later run's restarted rids look stale. */
  readonly mutantNoRunBoundary?: boolean;
  /**
   * The incarnation of the process this server runs in (a memory node: a restart comes back under a
   * new one, with an empty table and rid map). Stamped on every mailbox reply, so a client learns
   * that a grant's table is gone. Absent: replies carry none (read as 0).
   */
  readonly incarnation?: number;
  /**
   * Fence the compute nodes declared dead before this server started (a memory node's lock
   * manager, which a restart brings back in the middle of a run). Not for the servers a compute
   * node builds per run: a node declared dead in an earlier run may have rejoined since.
   */
  readonly fenceDeclaredAtStart?: boolean;
  /** Test-only mutant: a server started after deaths were declared serves the dead nodes' requests (it knows only later notices). */
  readonly mutantForgetDeadOnStart?: boolean;
  /** Test-only mutant: a failure notice fences the dead machine but leaves its holds and queued requests (waiters behind them wait on). */
  readonly mutantKeepDeadHolds?: boolean;
}

/** Packet types of the reclaim exchange (otherwise unused by the forward program's server protocols). */
const RECLAIM_QUERY = 'probe';
const RECLAIM_HOLD = 'transfer';
const RECLAIM_DONE = 'free';
/** Bounds: holds a node tracks for its clients, and requests a new home defers during grace. */
export const MAX_TRACKED_HOLDS = 1 << 16;
export const MAX_DEFERRED_REQUESTS = 1 << 12;

interface Deferred {
  readonly request: LockRequest;
  readonly kind: 'acquire' | 'release' | 'cancel';
  readonly trace: SpanContextRef | undefined;
}

/** A new home collecting the survivors' holds of the locks moved to it (one round per death). */
interface Grace {
  readonly round: number;
  /** Survivors that have not answered this round completely. */
  readonly pending: Set<NodeId>;
  /** Holds reported this round, per survivor, and the count each announced. */
  readonly holds: Map<NodeId, Map<string, LockRequest>>;
  readonly announced: Map<NodeId, number>;
}

export interface LockServerStats {
  readonly packetRequests: number;
  readonly localRequests: number;
  readonly duplicates: number;
  /** Requests ignored because their machine was declared dead (fenced). */
  readonly fenced: number;
  /** Holds and queued requests of dead machines dropped by recovery. */
  readonly droppedDead: number;
  /** Failover: holds installed from the survivors' reclaim answers when a grace ended. */
  readonly reclaimed: number;
  /** Failover: requests for moved locks that arrived during grace (deferred, or dropped beyond the bound). */
  readonly deferred: number;
  /** Failover: grace rounds started (deaths that moved locks here). */
  readonly graces: number;
  /** Try-only: acquires answered `busy`. */
  readonly busy: number;
  /** Run boundaries: mailbox requests of a newer run epoch that started afresh. */
  readonly runs: number;
  /** Holds and queued requests of earlier runs dropped at a run boundary. */
  readonly droppedOldRun: number;
  /** Mailbox requests of an earlier run that arrived after a newer one began (ignored). */
  readonly oldRunRequests: number;
}

/**
 * A node's lock-manager service: a {@link LockTable} fed by ACQUIRE/RELEASE packets addressed to
 * this node (replies are GRANT/ACK packets through the switch) and by node-local mailbox requests
 * (ParLock's local path: no packet). Requests are deduplicated per task by request id, so a
 * retransmitted or duplicated ACQUIRE never becomes a second holding. Mailbox requests may carry
 * their run's epoch (a server that outlives runs: see {@link LockServer.admitRun}).
 */
export class LockServer implements NodeService {
  readonly table: LockTable;
  private readonly node: NodeId;
  private readonly unsubscribe: (() => void) | undefined;
  private readonly unsubscribeFailures: (() => void) | undefined;
  /**
   * Machines declared dead during this run. A run's clients live in one incarnation of their
   * node (a restarted node joins the next run: a new server, or a new run epoch), so the node id fences.
   */
  private readonly dead = new Set<NodeId>();
  private readonly stopper = new AbortController();
  /** Highest request id seen per task (`machine/task`); a task's rids only grow. */
  private readonly newestRid = new Map<string, number>();
  private stats = { packetRequests: 0, localRequests: 0, duplicates: 0, fenced: 0, droppedDead: 0, reclaimed: 0, deferred: 0, graces: 0, busy: 0, runs: 0, droppedOldRun: 0, oldRunRequests: 0 };
  /**
   * Run epoch of the mailbox requests served now (0: unstamped). A memory node's server outlives
   * runs (live), and each run's clients restart their rids at 1; the epoch tells the runs apart.
   */
  private run = 0;
  readonly cpu: ServerCpu | undefined;
  /** Failover: holds this node's clients have on locks homed on other nodes (key `task/rid`). */
  private readonly remoteHolds = new Map<string, LockRequest>();
  /**
   * Holds of this node's clients that a grace round reclaimed, by the new home that took them. A
   * client whose release the dead home acknowledged may note it here only after this node answered
   * the reclaim (its process was stopped, say): the release is then forwarded to the new home, or
   * the lock would stay held there for ever (found by check --swarm: parlock seed 236, srvlock 447).
   */
  private readonly reclaimedBy = new Map<string, NodeId>();
  private grace: Grace | undefined;
  private graceRounds = 0;
  private readonly deferred: Deferred[] = [];

  constructor(
    private readonly context: NodeServiceContext,
    private readonly options: LockServerOptions,
  ) {
    this.table = new LockTable(options);
    this.node = context.ports.self.node;
    this.cpu = options.cpu ? new ServerCpu(context.ports.clock, options.cpu, this.stopper.signal) : undefined;
    const port = context.ports.switchPort;
    const serves = options.managesLocks || options.failover !== undefined;
    if (serves && port) this.unsubscribe = port.onPacket((packet) => this.onPacket(packet));
    if (serves) this.unsubscribeFailures = context.failures?.onComputeNodeFailed((node) => this.onMachineFailed(node));
    // A server started after deaths were declared (a restarted memory node) fences them from the
    // start: their requests may still wait in its inbox, and a grant to them would never be released.
    if (serves && options.fenceDeclaredAtStart && !options.mutantForgetDeadOnStart) for (const node of context.failures?.declared ?? []) if (node !== this.node) this.dead.add(node);
    void this.serveMailbox();
  }

  get counters(): LockServerStats {
    return { ...this.stats };
  }

  /** Whether this node is collecting the survivors' holds of locks moved to it (failover). */
  get inGrace(): boolean {
    return this.grace !== undefined;
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
    if (this.options.mutantKeepDeadHolds) return;
    const locks = this.table.lockIds();
    const before = this.countOf(machine, locks);
    for (const granted of dropDeadMachine(this.table, machine, locks)) this.reply('grant', granted);
    this.stats.droppedDead += before;
    if (this.options.failover) this.failOver(machine, this.options.failover);
  }

  /** Whether this node currently manages `lock`. */
  private manages(lock: LockId): boolean {
    const failover = this.options.failover;
    if (!failover) return this.options.managesLocks;
    return currentHome(failover, lock, this.context.computeNodes, this.dead) === this.node;
  }

  /** Whether `lock` was moved here from a dead home (so grace applies to it). */
  private moved(lock: LockId): boolean {
    const failover = this.options.failover;
    return failover !== undefined && failover.baseHome(lock, this.context.computeNodes) !== this.node;
  }

  /**
   * After `machine` died: if any dead home's locks now come here, start (or restart) a grace
   * round: ask every other survivor for its clients' holds; serve moved locks only once all answered.
   */
  private failOver(machine: NodeId, failover: LockServerFailoverOptions): void {
    if (this.grace) {
      this.grace.pending.delete(machine);
      this.grace.holds.delete(machine);
      this.grace.announced.delete(machine);
    }
    const nodes = this.context.computeNodes;
    // Locks move here when a dead base home's next live node is now this one, and this death caused it.
    const inherits = nodes.some((base) => this.dead.has(base) && failover.isBaseHome(base, nodes) && nextLiveNode(base, nodes, this.dead) === this.node);
    const newlyInherited = inherits && nextLiveNode(machine, nodes, this.dead) === this.node;
    if (!newlyInherited || failover.mutantServeDuringGrace) {
      this.maybeEndGrace();
      return;
    }
    this.stats.graces++;
    const peers = nodes.filter((n) => n !== this.node && !this.dead.has(n));
    this.grace = { round: ++this.graceRounds, pending: new Set(peers), holds: new Map(), announced: new Map() };
    void this.queryUntilDone(this.grace, failover.retransmitNs);
    this.maybeEndGrace();
  }

  private async queryUntilDone(grace: Grace, retransmitNs: number): Promise<void> {
    while (this.grace === grace && grace.pending.size > 0 && !this.stopper.signal.aborted) {
      for (const peer of grace.pending) this.sendReclaim(RECLAIM_QUERY, peer, 0, 'shared', 0, 0, grace.round);
      await this.context.ports.clock.sleep(retransmitNs, this.stopper.signal).catch(() => undefined);
    }
  }

  private sendReclaim(type: 'probe' | 'transfer' | 'free', dst: NodeId, lock: LockId, mode: LockMode, task: number, seq: number, round: number): void {
    this.context.ports.switchPort?.send({ type, lock, machine: this.node, task, mode, incarnation: round, seq, flags: 0, dst });
  }

  /** A new home asks: every hold this node's clients have on locks homed elsewhere (the asker keeps what is its own). */
  private answerReclaim(asker: NodeId, round: number): void {
    if (this.dead.has(asker)) return;
    for (const [key, hold] of this.remoteHolds) {
      this.sendReclaim(RECLAIM_HOLD, asker, hold.lock, hold.mode, hold.task, hold.rid, round);
      this.reclaimedBy.set(key, asker);
    }
    this.sendReclaim(RECLAIM_DONE, asker, 0, 'shared', 0, this.remoteHolds.size, round);
  }

  private onReclaimAnswer(packet: LockPacket): void {
    const grace = this.grace;
    if (!grace || packet.incarnation !== grace.round || !grace.pending.has(packet.machine)) return;
    if (packet.type === RECLAIM_HOLD) {
      let holds = grace.holds.get(packet.machine);
      if (!holds) grace.holds.set(packet.machine, (holds = new Map()));
      if (holds.size < MAX_TRACKED_HOLDS) {
        const hold: LockRequest = { lock: packet.lock, mode: packet.mode, machine: packet.machine, task: packet.task, rid: packet.seq, channel: 'packet' };
        holds.set(requestKey(hold.machine, hold.task, hold.rid), hold);
      }
    } else grace.announced.set(packet.machine, packet.seq);
    // Complete once the announced count of holds arrived (a lost packet leaves it pending: asked again).
    const announced = grace.announced.get(packet.machine);
    if (announced !== undefined && (grace.holds.get(packet.machine)?.size ?? 0) >= announced) grace.pending.delete(packet.machine);
    this.maybeEndGrace();
  }

  /** Grace ends when every survivor answered: its holds (and this node's own clients') become holders, then deferred requests are served. */
  private maybeEndGrace(): void {
    const grace = this.grace;
    if (!grace || grace.pending.size > 0) {
      if (!grace) this.serveDeferred();
      return;
    }
    this.grace = undefined;
    for (const key of this.remoteHolds.keys()) this.reclaimedBy.set(key, this.node);
    const own = [...this.remoteHolds.values()].map((h) => ({ ...h, machine: this.node, channel: 'local' as const }));
    for (const hold of [...own, ...[...grace.holds.values()].flatMap((m) => [...m.values()])]) {
      if (!this.manages(hold.lock) || !this.moved(hold.lock)) continue;
      const task = `${hold.machine}/${hold.task}`;
      if (hold.rid > (this.newestRid.get(task) ?? -1)) this.newestRid.set(task, hold.rid);
      const { outcome } = this.table.acquire(hold);
      if (outcome === 'granted' || outcome === 'queued') this.stats.reclaimed++;
    }
    this.serveDeferred();
  }

  private serveDeferred(): void {
    for (const d of this.deferred.splice(0)) {
      // A machine declared dead while its request waited is fenced like any of its requests.
      if (this.dead.has(d.request.machine)) continue;
      if (d.kind === 'acquire') this.acquire(d.request);
      else this.release(d.request, d.kind === 'cancel', d.trace);
    }
  }

  /** Routes a request of a live machine: served, deferred (moved lock during grace), or dropped (not this node's lock: the client routes again). */
  private submit(request: LockRequest, kind: Deferred['kind'], trace: SpanContextRef | undefined): void {
    if (!this.manages(request.lock)) return;
    if (this.grace && this.moved(request.lock)) {
      if (this.deferred.length < MAX_DEFERRED_REQUESTS) this.deferred.push({ request, kind, trace });
      this.stats.deferred++;
      return;
    }
    if (kind === 'acquire') this.acquire(request);
    else this.release(request, kind === 'cancel', trace);
  }

  private onNote(message: Message): void {
    const key = `${message.from.client}/${message.value}`;
    if (localOp(message) === LocalOp.noteReleased) {
      const hold = this.remoteHolds.get(key);
      const newHome = this.reclaimedBy.get(key);
      this.remoteHolds.delete(key);
      this.reclaimedBy.delete(key);
      if (hold && newHome !== undefined && !this.dead.has(newHome) && !this.options.failover?.mutantNoReclaimForward) this.forwardRelease(hold, newHome);
      return;
    }
    if (this.remoteHolds.size >= MAX_TRACKED_HOLDS) return;
    const hold: LockRequest = { lock: message.lock, mode: modeOf(message.data?.[1]), machine: this.node, task: message.from.client, rid: Number(message.value), channel: 'packet' };
    this.remoteHolds.set(key, hold);
  }

  /** Ends a reclaimed hold at the home that took it over; releasing a hold it no longer has is a no-op there. */
  private forwardRelease(hold: LockRequest, home: NodeId): void {
    if (home === this.node) {
      for (const next of this.table.release(hold.lock, this.node, hold.task, hold.rid)) this.reply('grant', next);
      return;
    }
    this.context.ports.switchPort?.send({ type: 'release', lock: hold.lock, machine: this.node, task: hold.task, mode: hold.mode, incarnation: 0, seq: hold.rid, flags: 0, dst: home });
  }

  private countOf(machine: NodeId, locks: readonly LockId[]): number {
    let n = 0;
    for (const lock of locks) for (const r of [...this.table.holders(lock), ...this.table.waiters(lock)]) if (r.machine === machine) n++;
    return n;
  }

  private onPacket(packet: LockPacket): void {
    if (packet.dst !== this.node) return;
    if (this.options.failover && packet.type === RECLAIM_QUERY) return this.answerReclaim(packet.machine, packet.incarnation);
    if (this.options.failover && (packet.type === RECLAIM_HOLD || packet.type === RECLAIM_DONE)) return this.onReclaimAnswer(packet);
    if (packet.type !== 'acquire' && packet.type !== 'release') return;
    if (this.dead.has(packet.machine)) {
      this.stats.fenced++;
      return;
    }
    this.stats.packetRequests++;
    const request = { lock: packet.lock, mode: packet.mode, machine: packet.machine, task: packet.task, rid: packet.seq, channel: 'packet' as const };
    this.submit(request, packet.type === 'acquire' ? 'acquire' : (packet.flags & FLAG_CANCEL) !== 0 ? 'cancel' : 'release', packet.trace);
  }

  private async serveMailbox(): Promise<void> {
    const { mailbox } = this.context.ports;
    while (!this.stopper.signal.aborted) {
      const message = await mailbox.receive(this.options.accepts ?? (() => true), { signal: this.stopper.signal });
      if (!message) return;
      if (this.cpu) this.cpu.admit(() => this.onMessage(message));
      else this.onMessage(message);
    }
  }

  private onMessage(message: Message): void {
    const op = localOp(message);
    if (op === LocalOp.topologyQuery) {
      this.context.ports.mailbox.send({ kind: 'custom', to: message.from, lock: 0, data: encodeNodes(this.context.computeNodes) });
      return;
    }
    if (op === LocalOp.viewQuery) {
      this.context.ports.mailbox.send({ kind: 'custom', to: message.from, lock: 0, data: encodeNodes([...this.dead], LocalOp.viewReply) });
      return;
    }
    if ((op === LocalOp.noteHeld || op === LocalOp.noteReleased) && message.value !== undefined && message.from.node === this.node) return this.onNote(message);
    if ((!this.options.managesLocks && !this.options.failover) || message.value === undefined) return;
    if (op !== LocalOp.acquire && op !== LocalOp.release && op !== LocalOp.cancel) return;
    const run = message.epoch === undefined ? 0 : Number(message.epoch);
    if (!this.admitRun(run)) {
      this.stats.oldRunRequests++;
      return;
    }
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
      ...(run > 0 ? { run } : {}),
    };
    this.submit(request, op === LocalOp.acquire ? 'acquire' : op === LocalOp.cancel ? 'cancel' : 'release', message.trace);
  }

  /**
   * Whether a mailbox request of run `run` is served. A newer run ends the current one: what the
   * server kept belongs to clients that are gone (a run aborted mid-way leaves holds), so it starts
   * as a fresh server would. A request of an earlier run (a late retransmit or cancel) is ignored:
   * it neither grants nor releases anything of the run now served.
   */
  private admitRun(run: number): boolean {
    if (run === this.run || this.options.mutantNoRunBoundary) return true;
    if (run < this.run) return false;
    this.run = run;
    this.stats.runs++;
    this.stats.droppedOldRun += this.table.clear();
    this.newestRid.clear();
    this.dead.clear();
    this.deferred.length = 0;
    this.remoteHolds.clear();
    this.reclaimedBy.clear();
    this.grace = undefined;
    return true;
  }

  private acquire(request: LockRequest): void {
    const task = `${request.machine}/${request.task}`;
    const newest = this.newestRid.get(task) ?? -1;
    const result = request.rid > newest ? this.table.acquire(request) : this.table.acquire(request, true);
    if (this.options.tryOnly && result.outcome === 'queued') {
      // A try never waits: withdraw it; the rid stays fresh so the client's retry is tried again.
      this.table.release(request.lock, request.machine, request.task, request.rid);
      this.stats.busy++;
      this.reply('busy', request);
      return;
    }
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

  private reply(type: 'grant' | 'ack' | 'busy', to: LockRequest, trace?: SpanContextRef): void {
    if (to.channel === 'local') this.replyLocal(type, to, trace);
    else this.replyPacket(type === 'busy' ? 'push-back' : type, to.lock, to.mode, to.machine, to.task, to.rid, trace);
  }

  private replyPacket(type: 'grant' | 'ack' | 'push-back', lock: LockId, mode: LockMode, machine: NodeId, task: number, rid: number, trace?: SpanContextRef): void {
    const packet: LockPacket = { type, lock, machine: this.node, task, mode, incarnation: 0, seq: rid, flags: 0, dst: machine };
    this.context.ports.switchPort?.send(trace ? { ...packet, trace } : packet);
  }

  private replyLocal(type: 'grant' | 'ack' | 'busy', to: LockRequest, trace?: SpanContextRef): void {
    const message = {
      kind: type === 'grant' ? ('grant' as const) : ('custom' as const),
      to: { node: to.machine, client: to.task },
      lock: to.lock,
      value: BigInt(to.rid),
      data: encodeReply(type === 'grant' ? LocalOp.grant : type === 'busy' ? LocalOp.busy : LocalOp.ack, this.options.incarnation),
      // the request's run, so a client of a later run never takes this reply for its own
      ...(to.run !== undefined ? { epoch: BigInt(to.run) } : {}),
    };
    this.context.ports.mailbox.send(trace ? { ...message, trace } : message);
  }
}

export type { RequestChannel };
