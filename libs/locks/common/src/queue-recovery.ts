import { lockTableBytesPerNode } from '@lockfabric/ports';
import type { LockTableLayout, NodeId, Verbs } from '@lockfabric/ports';

/**
 * Coordinator-driven recovery of the queue locks (mcs, alock) after a compute node dies: quiesce,
 * drain, abort, reset, resume. A queue names its members only through pointers spread over the
 * members' own nodes, so no survivor can repair a queue a dead member sits in; instead every
 * survivor stops joining queues, the survivors' holders finish, every remaining waiter is aborted,
 * and the tail words go back to free (README of libs/locks/mcs, "Failures").
 *
 * This file is the part every queue lock shares: the per-node group of clients the coordinator
 * talks to, and the pure decision of when a reset is safe.
 */

/** Where one client's acquisitions stand. */
export interface QueueMemberState {
  /** Granted and not yet released (a release in progress counts). */
  readonly holding: number;
  /** Enqueued and polling for a grant (or for the other cohort, in ALock's Peterson wait). */
  readonly waiting: number;
  /** A step with a write in flight (joining the tail, linking, writing victim): never aborted mid-way. */
  readonly busy: number;
  /** Queue nodes a failed verb left unusable; freed by the abort. */
  readonly broken: number;
}

/** One lock client in a recovery: mcs and alock clients implement it. */
export interface QueueRecoveryMember {
  recoveryState(): QueueMemberState;
  /**
   * Called only when every member of the node reported nothing held or busy, synchronously after
   * that check: each waiting acquisition ends with LockAbortedError(reason) and never takes the lock
   * afterwards, even if a grant reaches it; its queue nodes (and broken ones) are free again.
   * Returns the acquisitions aborted.
   */
  abortWaiters(reason: string): number;
}

export interface QueueGroupReport extends QueueMemberState {
  readonly members: number;
  readonly gated: boolean;
}

export type AbortOutcome =
  | { readonly done: true; readonly aborted: number }
  | { readonly done: false; readonly holding: number; readonly busy: number };

/**
 * The clients of one queue-lock run on one compute node. The gate keeps new acquires from joining
 * any queue while a recovery runs (they wait, bounded by their own deadline); `tryAbort` is the
 * node's atomic step: if nothing is held or busy on the node, every waiter is aborted at once.
 */
export class QueueRecoveryGroup {
  private readonly members = new Set<QueueRecoveryMember>();
  private closed = false;
  private readonly dead = new Set<NodeId>();
  /** Acquires waiting for the gate to open (called once, at the next open). */
  private readonly openWaiters = new Set<() => void>();

  register(member: QueueRecoveryMember): () => void {
    this.members.add(member);
    return () => this.members.delete(member);
  }

  /** True while new acquires must not join a queue. */
  get gated(): boolean {
    return this.closed;
  }

  /** Compute nodes declared dead: a handover WRITE that fails towards one counts as done. */
  isDead(node: NodeId): boolean {
    return this.dead.has(node);
  }

  gate(deadNodes: readonly NodeId[]): void {
    this.closed = true;
    for (const node of deadNodes) this.dead.add(node);
  }

  open(): void {
    this.closed = false;
    const waiters = [...this.openWaiters];
    this.openWaiters.clear();
    for (const wake of waiters) wake();
  }

  /**
   * Calls `wake` at the next {@link open}, so a gated acquire sleeps until then instead of polling
   * the gate; returns how to cancel.
   */
  onOpen(wake: () => void): () => void {
    this.openWaiters.add(wake);
    return () => this.openWaiters.delete(wake);
  }

  report(): QueueGroupReport {
    let holding = 0;
    let waiting = 0;
    let busy = 0;
    let broken = 0;
    for (const m of this.members) {
      const s = m.recoveryState();
      holding += s.holding;
      waiting += s.waiting;
      busy += s.busy;
      broken += s.broken;
    }
    return { members: this.members.size, gated: this.closed, holding, waiting, busy, broken };
  }

  /**
   * Aborts every waiter of the node if, right now, nothing is held or busy on it (checked and done
   * without yielding, so no grant can slip in between). Refused while the gate is open: a new
   * acquire could join a queue behind the abort.
   */
  tryAbort(reason: string): AbortOutcome {
    const r = this.report();
    if (!this.closed || r.holding > 0 || r.busy > 0) return { done: false, holding: r.holding, busy: r.busy };
    let aborted = 0;
    for (const m of this.members) aborted += m.abortWaiters(reason);
    return { done: true, aborted };
  }
}

const groups = new WeakMap<object, Map<NodeId, QueueRecoveryGroup>>();

/**
 * The recovery group of the clients of one run (`locks`: the run's lock table layout object, shared
 * by every client of the run) on compute node `node`; created on first use.
 */
export function queueRecoveryGroup(locks: object, node: NodeId): QueueRecoveryGroup {
  let byNode = groups.get(locks);
  if (!byNode) groups.set(locks, (byNode = new Map()));
  let group = byNode.get(node);
  if (!group) byNode.set(node, (group = new QueueRecoveryGroup()));
  return group;
}

/** The group of `node` in the run of `locks`, if a client of it exists. */
export function existingQueueRecoveryGroup(locks: object, node: NodeId): QueueRecoveryGroup | undefined {
  return groups.get(locks)?.get(node);
}

/** One surviving compute node as the recovery driver sees it (NATS request/reply live, direct calls in tests). */
export interface QueueRecoveryParticipant {
  readonly machine: NodeId;
  /** Closes the gate; `false`: this node runs no queue-lock clients and takes no further part. */
  gate(epoch: bigint, deadNodes: readonly NodeId[]): Promise<boolean>;
  tryAbort(epoch: bigint): Promise<AbortOutcome>;
  /** Opens the gate again. */
  resume(epoch: bigint): Promise<void>;
}

export interface QueueRecoveryStep {
  readonly stage: 'gate' | 'drain' | 'reset' | 'resume';
  readonly startNs: number;
  readonly endNs: number;
  readonly detail: string;
}

export interface QueueRecoveryParams {
  readonly epoch: bigint;
  readonly participants: readonly QueueRecoveryParticipant[];
  readonly deadNodes: readonly NodeId[];
  /** Zeroes the queue-lock table (every tail word free). Runs only after every survivor aborted. */
  readonly resetTable: () => Promise<void>;
  readonly nowNs: () => number;
  readonly pause: () => Promise<void>;
  /** Drain rounds before the recovery gives up (the gates then open again, nothing is reset). */
  readonly maxDrainRounds: number;
  /**
   * No reset starts later than this after the gate calls were sent: participants whose gate opens
   * by itself after a lease (live) must still be gated when the reset lands. Default: no limit.
   */
  readonly resetWithinNs?: number;
  /** Test-only mutant: reset the table right after the gate and resume, without the drain and the aborts. */
  readonly mutantSkipDrain?: boolean;
}

export interface QueueRecoveryRun {
  readonly epoch: bigint;
  readonly machines: readonly NodeId[];
  readonly steps: readonly QueueRecoveryStep[];
  /** False when the drain did not complete within maxDrainRounds (no reset happened). */
  readonly reset: boolean;
  readonly aborted: number;
  readonly drainRounds: number;
}

/**
 * The coordinator's side: gate every survivor, then in rounds ask each survivor that has not yet
 * aborted to abort its waiters (refused while it holds a lock or has a write in flight), until
 * all have; then reset the table and open the gates.
 *
 * Why it is safe: a node that aborted has, from that instant, no holder and no acquisition that
 * can become one (its waiters are aborted, new acquires are gated). When the last survivor has
 * aborted, no survivor holds a lock and none ever will until the gates open, and the dead node
 * is fenced by the memory nodes; so zeroing the tails admits nobody beside a holder. Aborting a
 * waiter costs nothing in safety: an aborted acquisition never enters, even if a grant arrives.
 * A survivor that does not answer fails the recovery (the driver throws); the gates of those that
 * did are opened again, and nothing is reset.
 */
export async function runQueueLockRecovery(params: QueueRecoveryParams): Promise<QueueRecoveryRun> {
  const { epoch, nowNs } = params;
  const steps: QueueRecoveryStep[] = [];
  let start = nowNs();
  const gateSentNs = start;
  const gated = await Promise.allSettled(params.participants.map((p) => p.gate(epoch, params.deadNodes)));
  const participants = params.participants.filter((_, i) => {
    const g = gated[i];
    return g?.status === 'fulfilled' && g.value;
  });
  const refused = gated.find((g): g is PromiseRejectedResult => g.status === 'rejected');
  if (refused) {
    // a survivor that cannot be gated could enqueue behind a reset: give up, and ungate the others
    await Promise.allSettled(participants.map((p) => p.resume(epoch)));
    throw refused.reason;
  }
  steps.push({ stage: 'gate', startNs: start, endNs: nowNs(), detail: `survivors=${participants.length}` });
  const machines = participants.map((p) => p.machine);
  if (participants.length === 0) return { epoch, machines, steps, reset: false, aborted: 0, drainRounds: 0 };
  try {
    if (params.mutantSkipDrain) {
      await params.resetTable();
      return { epoch, machines, steps, reset: true, aborted: 0, drainRounds: 0 };
    }
    start = nowNs();
    let pending = participants;
    let aborted = 0;
    let rounds = 0;
    const lateNs = gateSentNs + (params.resetWithinNs ?? Infinity);
    while (pending.length > 0 && rounds < params.maxDrainRounds && nowNs() < lateNs) {
      if (rounds > 0) await params.pause();
      rounds++;
      const outcomes = await Promise.all(pending.map((p) => p.tryAbort(epoch)));
      aborted += outcomes.reduce((n, o) => n + (o.done ? o.aborted : 0), 0);
      pending = pending.filter((_, i) => !outcomes[i]?.done);
    }
    steps.push({ stage: 'drain', startNs: start, endNs: nowNs(), detail: `rounds=${rounds} aborted=${aborted} undrained=${pending.length}` });
    if (pending.length > 0 || nowNs() >= lateNs) return { epoch, machines, steps, reset: false, aborted, drainRounds: rounds };
    start = nowNs();
    await params.resetTable();
    steps.push({ stage: 'reset', startNs: start, endNs: nowNs(), detail: 'tails zeroed' });
    return { epoch, machines, steps, reset: true, aborted, drainRounds: rounds };
  } finally {
    start = nowNs();
    await Promise.allSettled(participants.map((p) => p.resume(epoch)));
    steps.push({ stage: 'resume', startNs: start, endNs: nowNs(), detail: '' });
  }
}

/** Bytes per WRITE of a table reset: a large table goes in several. */
const RESET_CHUNK_BYTES = 64 * 1024;

/**
 * Zeroes the whole lock table on every memory node with WRITEs (a queue lock's initial state: every
 * tail null; ALock's victim 0). Returns the bytes written. Only safe once no client holds, waits or
 * is about to join a queue: see runQueueLockRecovery.
 */
export async function zeroLockTable(verbs: Verbs, layout: LockTableLayout): Promise<number> {
  const perNode = lockTableBytesPerNode(layout);
  let written = 0;
  await Promise.all(
    layout.memoryNodes.map(async (home) => {
      for (let at = 0; at < perNode; at += RESET_CHUNK_BYTES) {
        const length = Math.min(RESET_CHUNK_BYTES, perNode - at);
        await verbs.write({ node: home.node, region: home.region, rkey: home.rkey, offset: home.baseOffset + at }, new Uint8Array(length));
        written += length;
      }
    }),
  );
  return written;
}

/** A node's group driven by direct calls (in-process substrates and tests); live runs go over NATS. */
export function groupParticipant(machine: NodeId, group: QueueRecoveryGroup, reason = 'a compute node died; the queue locks were reset by recovery'): QueueRecoveryParticipant {
  return {
    machine,
    gate: async (_epoch, deadNodes) => {
      group.gate(deadNodes);
      return true;
    },
    tryAbort: async () => group.tryAbort(reason),
    resume: async () => group.open(),
  };
}
