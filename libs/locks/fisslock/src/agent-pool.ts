import type { Clock, LockId, LockMode, LockPacket, NodeId, SpanContextRef, SwitchPort } from '@lockfabric/ports';
import { createSequencedLink, seqStreamOf } from './rack-links.js';
import type { SequencedLink } from './rack-links.js';
import { BounceBackoff } from './pool/bounce-backoff.js';
import { holderKey } from './pool/agent.js';
import { NO_AGENT, step } from './pool/agent-state.js';
import type { AgentEvent, AgentOutcome, AgentRules, AgentState, AgentValue } from './pool/agent-state.js';
import { ReceiveDedup } from './pool/receive-dedup.js';
import { StarvationNotifier } from './pool/starvation.js';
import { StuckReleases } from './pool/stuck-releases.js';
import { StuckWatchdog } from './pool/stuck-watchdog.js';
import type { StuckReport } from './pool/stuck-watchdog.js';
import { TransferAssembly } from './pool/transfer-assembly.js';
import { LifetimeMarks } from './pool/lifetime-marks.js';
import { parksAtHome } from './pool/home-parking.js';
import { GivenUpRequests } from './pool/given-up.js';
import { CountedGrants } from './pool/counted-grants.js';
import { LockQuarantine } from './pool/quarantine.js';
import { BouncedOrigins, NO_ANCHORS } from './pool/lifetime-anchors.js';
import { zeroCounts } from './pool/pool-types.js';
import type { AgentOrder, AgentPoolOptions, Counts, PoolCounters, TaskListener } from './pool/pool-types.js';
import type { PoolInternals } from './pool/pool-internals.js';
import { ReceivePath } from './pool/receive-path.js';
import { AgentActions } from './pool/agent-actions.js';
import { otherInterest, timeoutFreeUnsafe } from './pool/timeout-free.js';
import { PoolRecoveryHooks } from './pool/recovery-hooks.js';
import type { RecoveryClientView } from './recovery/recovery-client.js';
import type { MachineOrders, ServerReport } from './recovery/recovery-state.js';

export type { FissPolicy, Waiter } from './pool/agent.js';
export type { AgentState, AgentValue } from './pool/agent-state.js';
export type { AgentPlacement } from './pool/home-parking.js';
export type { AgentOrder, AgentPoolOptions, PoolCounters, TaskListener } from './pool/pool-types.js';

const key = holderKey;

/**
 * A machine's FissLock runtime: the agent pool (spec §4.3). One instance per machine; clients call
 * the `tryLocal*` methods directly (workflows ④–⑦ without the network) and send the rest through
 * `link`.
 *
 * Each lock's agent is a plain value (`AgentState`) changed only by the pure `step` of
 * pool/agent-state.ts; this class feeds it events and pool/agent-actions.ts carries out the
 * actions it returns. Every packet that reaches the machine takes pool/receive-path.ts; S1/S2 and
 * the per-lock repair act through pool/recovery-hooks.ts. The machine-wide bookkeeping lives in
 * src/pool behind private state: receive dedup, transfer assembly, bounce back-off, stuck
 * releases, starvation notices, the T_STUCK watchdog.
 */
export class AgentPool {
  /** Every lock with an agent here, live or pending (a lock without one has no entry). */
  private readonly states = new Map<LockId, AgentState>();
  private nextAgentId = 1;
  private readonly rules: AgentRules;
  private currentLink: SequencedLink;
  private readonly listeners = new Map<number, TaskListener>();
  /**
   * Local tasks whose request an agent recorded (ACKed ACCEPTED), possibly only a copy bounced by
   * another machine: their abort must go to the agent (REACHED), never to the switch's
   * timeout-free, and they may have a transfer GRANT on its way (see mayReissueAbort).
   */
  private readonly recordedTasks = new Set<number>();
  private readonly dedup = new ReceiveDedup();
  private readonly transfers = new TransferAssembly((p) => this.streamOf(p));
  private readonly backoff: BounceBackoff;
  private readonly stuck: StuckReleases;
  private readonly starvation: StarvationNotifier;
  /** T_STUCK watchdog (spec §12.9): stuck locks go to `onStuckLock` (the per-lock repair). */
  private readonly watchdog: StuckWatchdog;
  /** Where the watchdog's reports go (the per-lock repair, or the compute node's reporter). */
  onStuckLock: ((report: StuckReport) => void) | undefined;
  private stopped = false;
  /** Enders and held marks of this machine's packets, per lock (see timeoutFreeUnsafe). */
  private readonly marks = new LifetimeMarks();
  /** Requests whose abort was answered here before their ② copy came: never held (pool/given-up.ts). */
  private readonly givenUp = new GivenUpRequests();
  /** Requests whose ② grant an agent here counted: a later DUP copy of one counts nothing (pool/counted-grants.ts). */
  private readonly countedGrants = new CountedGrants();
  /** Requesters' duplicate ACQUIREs this machine bounced: the seq of the copy the decider first saw. */
  private readonly bouncedOrigins = new BouncedOrigins();
  /** A stale ① GRANT for a request whose abort-release already freed the lock installs nothing. */
  private readonly discardedTasks = new Set<number>();
  private readonly unsubscribe: () => void;
  /** FissLock-Local only (placement home): the compute nodes whose ParLock homes agents park at. */
  private homes: readonly NodeId[] | undefined;
  private readonly count: Counts = zeroCounts();
  /** Locks under a per-lock repair on this machine (pool/quarantine.ts). */
  private readonly quarantined = new LockQuarantine();
  /** What the receive path and the recovery hooks share of this pool (pool/pool-internals.ts). */
  private readonly internals: PoolInternals;
  /** Carries out what the agents' `step` asks for (pool/agent-actions.ts). */
  private readonly actions: AgentActions;
  /** Every packet that reaches this machine (pool/receive-path.ts). */
  private readonly receiver: ReceivePath;
  /** S1/S2 and the per-lock repair's side on this machine (pool/recovery-hooks.ts). */
  private readonly recovery: PoolRecoveryHooks;

  constructor(
    readonly machine: NodeId,
    private readonly port: SwitchPort,
    private readonly clock: Clock,
    readonly options: AgentPoolOptions,
  ) {
    this.currentLink = createSequencedLink(machine, port, clock, options);
    this.rules = {
      machine,
      policy: options.policy,
      parksHere: (lid) => this.homes !== undefined && parksAtHome(lid, machine, this.homes),
      ...(options.mutantParkedModeChange === true ? { mutantParkedModeChange: true } : {}),
      ...(options.mutantDupNeverGranted === true ? { mutantDupNeverGranted: true } : {}),
      ...(options.mutantCountForeignCopy === true ? { mutantCountForeignCopy: true } : {}),
    };
    this.backoff = new BounceBackoff(options.bounceBackoffNs ?? 0, options.rtoNs);
    this.stuck = new StuckReleases(options.stuckAfterNs ?? 10 * options.rtoNs);
    this.starvation = new StarvationNotifier(options.policy, options.starvePeriodNs, clock, () => this.link, (lid) => this.agentOf(lid), machine, options.mutantNoStarve === true);
    // never shorter than the stuck-RELEASE wait (10 RTO): a slow link (live RTO 250 ms) is not a stuck lock
    const tStuckNs = options.tStuckNs ? Math.max(options.tStuckNs, options.stuckAfterNs ?? 10 * options.rtoNs) : 0;
    this.watchdog = new StuckWatchdog(tStuckNs, clock, this.watchdogView(), (r) => {
      this.count.stuckLocks++;
      this.onStuckLock?.(r);
    });
    this.internals = this.shareInternals();
    this.actions = new AgentActions(this.internals);
    this.receiver = new ReceivePath(this.internals);
    this.recovery = new PoolRecoveryHooks(this.internals);
    this.currentLink.intercept = (p) => this.recovery.interceptQuarantined(p);
    this.unsubscribe = port.onPacket((packet) => this.receiver.receive(packet));
  }

  /** The machine's sequenced link to the switch(es); recovery replaces it (a new sequence space). */
  get link(): SequencedLink {
    return this.currentLink;
  }

  /** What the pool has counted so far (a copy). */
  get counters(): PoolCounters {
    return { ...this.count };
  }

  /** How many T_STUCK reports the watchdog made. */
  get stuckReports(): number {
    return this.watchdog.reports;
  }

  /** The repairer found the lock well after all (e.g. a long hold): the watchdog may report it again. */
  dismissStuck(lid: LockId): void {
    this.watchdog.dismiss(lid);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.link.stop();
    this.starvation.clear();
  }

  /** FissLock-Local: parks agents at their locks' ParLock homes over `computeNodes` (no-op unless placement is home). */
  placeAtHomes(computeNodes: readonly NodeId[]): void {
    if (this.options.placement !== 'home') return;
    this.homes = [...computeNodes];
  }

  // ---- reading the agents (tests, diagnostics, recovery reports) ----

  /** The lock's agent state here. */
  stateOf(lid: LockId): AgentState {
    return this.states.get(lid) ?? NO_AGENT;
  }

  /** The lock's live agent here, if any. */
  agentOf(lid: LockId): AgentValue | undefined {
    const s = this.states.get(lid);
    return s?.kind === 'live' ? s.agent : undefined;
  }

  /** The lock's pending agent here (handed on, not yet answered), if any. */
  pendingAgentOf(lid: LockId): AgentValue | undefined {
    const s = this.states.get(lid);
    return s?.kind === 'pending' ? s.agent : undefined;
  }

  /** Locks with a live agent here, with it. */
  liveAgents(): [LockId, AgentValue][] {
    return [...this.states].flatMap(([lid, s]) => (s.kind === 'live' ? [[lid, s.agent] as [LockId, AgentValue]] : []));
  }

  /** Locks with a pending agent here, with it. */
  pendingAgents(): [LockId, AgentValue][] {
    return [...this.states].flatMap(([lid, s]) => (s.kind === 'pending' ? [[lid, s.agent] as [LockId, AgentValue]] : []));
  }

  /**
   * Puts an agent here as recovery's S2 orders it (incarnation 0 unless given), replacing what the
   * lock had. Also how a harness or a test builds a state without running the protocol to it.
   */
  restoreAgent(lid: LockId, order: AgentOrder): void {
    this.states.delete(lid);
    const agent: AgentValue = { id: this.nextAgentId++, mode: order.mode, inca: order.inca ?? 0, holders: new Set(order.holders.map((h) => key(h.mid, h.task))), wqueue: order.wqueue.map((w) => ({ mid: w.mid, task: w.task, mode: w.mode })), anchors: NO_ANCHORS };
    this.apply(lid, { type: 'restored', agent });
  }

  /** Test-only: sets a lock's state directly (e.g. an agent handed on, to check what the checks see). */
  setStateForTest(lid: LockId, state: AgentState): void {
    if (state.kind === 'none') this.states.delete(lid);
    else this.states.set(lid, state);
  }

  // ---- the tasks of this machine's clients ----

  /** `task` waits for its GRANT (or the end of its abort) through `listener`. */
  listen(task: number, listener: TaskListener): void {
    this.listeners.set(task, listener);
  }

  listenerOf(task: number): TaskListener | undefined {
    return this.listeners.get(task);
  }

  /** The tasks of this machine waiting for a GRANT or for their abort to end. */
  waitingTasks(): number[] {
    return [...this.listeners.keys()];
  }

  /** Whether an agent recorded `task`'s request (its abort must go to the agent). */
  isRecorded(task: number): boolean {
    return this.recordedTasks.has(task);
  }

  /** A local task's attempt is over (granted, or its abort answered): forget what it waited for. */
  endTask(task: number): void {
    this.listeners.delete(task);
    this.recordedTasks.delete(task);
  }

  /** Records how this machine's abort-RELEASE of `task` was answered (client and reissued aborts). */
  abortAnswered(task: number, ack: LockPacket): void {
    this.receiver.abortAnswered(task, ack);
  }

  /**
   * The ACK of a request of `task` (its ACQUIRE, or a copy this machine bounced): ACCEPTED means an
   * agent queued it; BOUNCED (not DUP) by another machine means it travels on and may be queued
   * out of sight. Either way a transfer GRANT to it may come (see mayReissueAbort).
   */
  noteRecorded(task: number, ack: LockPacket): void {
    this.receiver.noteRecorded(task, ack);
  }

  // ---- local paths (④–⑦), called by clients of this machine ----

  tryLocalAcquire(lid: LockId, task: number, mode: LockMode): 'granted' | 'queued' | 'no-agent' {
    return this.apply(lid, { type: 'local-acquire', task, mode }) as 'granted' | 'queued' | 'no-agent';
  }

  /** Removes a locally queued waiter that gave up; false if it is not queued here. */
  abortLocal(lid: LockId, task: number): boolean {
    if (this.agentOf(lid) === undefined) return false;
    return this.apply(lid, { type: 'local-abort', task }) === 'removed';
  }

  /** Whether this machine has, or may be about to receive, an agent for `lid` other than `task`'s own lost ① grant (pool/timeout-free.ts). */
  otherInterest(lid: LockId, task: number): boolean {
    return otherInterest(this.internals, lid, task);
  }

  /** Whether an abort of `task` for `lid` sent now must not take the switch's timeout-free (pool/timeout-free.ts). */
  timeoutFreeUnsafe(lid: LockId, task: number): boolean {
    return timeoutFreeUnsafe(this.internals, lid, task);
  }

  /** The client sent an abort-RELEASE of `lid` as `seq`; unreached, it may end a lifetime here (LifetimeMarks). */
  abortSent(lid: LockId, seq: number, reached: boolean): void {
    if (!reached) this.marks.ender(lid, seq);
  }

  /** Whether an agent-carrying GRANT for `lid` arrived here and still waits for its transfer entries (an agent in flight). */
  awaitingTransfer(lid: LockId): boolean {
    return this.transfers.hasGrantFor(lid);
  }

  /** `switchShared`: the hold is a ② grant (see agent-state.ts releaseCore). */
  tryLocalRelease(lid: LockId, task: number, acquireSpan?: SpanContextRef, switchShared = false): 'done' | 'no-agent' | 'not-found' {
    return this.apply(lid, { type: 'local-release', task, switchShared, acquireSpan }) as 'done' | 'no-agent' | 'not-found';
  }

  // ---- the agents' state machine ----

  /** Feeds one event to the lock's agent and carries out what it asks for, in order. */
  private apply(lid: LockId, event: AgentEvent): AgentOutcome {
    const next = step(this.rules, lid, this.states.get(lid) ?? NO_AGENT, event);
    if (next.state.kind === 'none') this.states.delete(lid);
    else this.states.set(lid, next.state);
    for (const action of next.actions) this.actions.perform(lid, action);
    return next.outcome;
  }

  // ---- recovery (S1/S2 hooks, spec §7.2) and per-lock repair (spec §12.9): pool/recovery-hooks.ts ----

  /** A client that keeps records joins (or leaves) S1's report and S2's aborts. */
  addRecoveryClient(client: RecoveryClientView): void {
    this.recovery.addRecoveryClient(client);
  }

  removeRecoveryClient(client: RecoveryClientView): void {
    this.recovery.removeRecoveryClient(client);
  }

  /** The clients that keep records, in the order they joined. */
  recoveryClientList(): RecoveryClientView[] {
    return this.recovery.recoveryClientList();
  }

  /** True between S1 (pause) and the end of S2 on this machine. */
  get recoveryPaused(): boolean {
    return this.recovery.recoveryPaused;
  }

  /** Packets dropped because they were sent while paused (S2's state supersedes them). */
  get recoveryDiscarded(): number {
    return this.recovery.recoveryDiscarded;
  }

  /** S1, first half: nothing of this machine reaches the network until S2 (PoolRecoveryHooks). */
  pauseForRecovery(): void {
    this.recovery.pauseForRecovery();
  }

  /** S1, second half: this machine's agents (live and pending) and its clients' requests. */
  recoveryReport(): ServerReport {
    return this.recovery.recoveryReport();
  }

  /** S2 on this machine: the ordered agents on a new link, tasks woken and aborted (PoolRecoveryHooks). */
  applyRecovery(orders: MachineOrders): void {
    this.recovery.applyRecovery(orders);
  }

  /** This machine has failed (sim and tests): nothing it does reaches the network again, nothing reaches it. */
  failStop(): void {
    this.recovery.failStop();
  }

  /** Recovery S1: this machine's requests still unanswered on the link settle as accepted. */
  settleOutstandingAcquires(): number {
    return this.recovery.settleOutstandingAcquires();
  }

  /** A per-lock repair begins: nothing of `lid` leaves or enters this machine until `applyLockRepair`. */
  quarantineLock(lid: LockId): void {
    this.recovery.quarantineLock(lid);
  }

  /** What the repair's drain waits for: this machine's unacknowledged packets of `lid`, and when the last one of it arrived. */
  quarantineState(lid: LockId): { readonly unacked: number; readonly lastArrivalNs: number } {
    return this.recovery.quarantineState(lid);
  }

  /** S1 for one lock: its agents here (live and pending) and the local clients' records of it. */
  lockReport(lid: LockId): ServerReport {
    return this.recovery.lockReport(lid);
  }

  /** S2 for one lock: its agent here replaced by the ordered one, tasks aborted and woken, the quarantine ended. */
  applyLockRepair(lid: LockId, orders: MachineOrders): void {
    this.recovery.applyLockRepair(lid, orders);
  }

  /** The sender's sequence window a packet belongs to: one per machine and switch (rack-links.ts). */
  private streamOf(p: LockPacket): number {
    return seqStreamOf(p, this.options.racks ?? 1);
  }

  private watchdogView() {
    return {
      agent: (lid: LockId) => this.agentOf(lid),
      stopped: () => this.stopped || this.recovery.recoveryPaused,
      orphanedLocalHolder: (_lid: LockId, a: AgentValue): string | undefined => this.recovery.orphanedLocalHolder(a),
    };
  }

  /** The view of this pool its receive path and recovery hooks work on (live: the link and `stopped` are read when used). */
  private shareInternals(): PoolInternals {
    const link = (): SequencedLink => this.currentLink;
    const stopped = (): boolean => this.stopped;
    return {
      machine: this.machine,
      port: this.port,
      clock: this.clock,
      options: this.options,
      get link() {
        return link();
      },
      setLink: (next) => {
        this.currentLink = next;
      },
      states: this.states,
      listeners: this.listeners,
      recordedTasks: this.recordedTasks,
      discardedTasks: this.discardedTasks,
      dedup: this.dedup,
      transfers: this.transfers,
      backoff: this.backoff,
      stuck: this.stuck,
      starvation: this.starvation,
      watchdog: this.watchdog,
      marks: this.marks,
      givenUp: this.givenUp,
      countedGrants: this.countedGrants,
      bouncedOrigins: this.bouncedOrigins,
      quarantined: this.quarantined,
      count: this.count,
      get stopped() {
        return stopped();
      },
      apply: (lid, event) => this.apply(lid, event),
      newAgentId: () => this.nextAgentId++,
      agentOf: (lid) => this.agentOf(lid),
      pendingAgentOf: (lid) => this.pendingAgentOf(lid),
      liveAgents: () => this.liveAgents(),
      pendingAgents: () => this.pendingAgents(),
      restoreAgent: (lid, order) => this.restoreAgent(lid, order),
      timeoutFreeUnsafe: (lid, task) => this.timeoutFreeUnsafe(lid, task),
      tryLocalRelease: (lid, task) => this.tryLocalRelease(lid, task),
      deliver: (g) => this.receiver.deliver(g),
      ack: (p, src, status, dup) => this.receiver.ack(p, src, status, dup),
      absorbQuarantined: (p) => this.recovery.absorbQuarantined(p),
      streamOf: (p) => this.streamOf(p),
      stop: () => this.stop(),
    };
  }
}
