import { NS_PER_MS } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import type { ProtocolRecoveries, RecoveryMechanism, RecoveryRule } from './recovery-rules.js';
import { rulesFor } from './recovery-rules.js';

/** One protocol's part of a recovery. */
export interface RecoveryAction {
  /** Protocol id, or `*` for every protocol (a memory node's whole table). */
  readonly protocol: string;
  readonly mechanism: RecoveryMechanism;
  readonly action: string;
  /** `lease`: when the lease bound has passed (coordinator clock). */
  readonly dueAtNs?: number;
  /** When the action was over; for `none`, when it was recorded as unrecoverable. */
  readonly doneAtNs?: number;
  /** Steps the coordinator drove for this action (FissLock S1–S3), with their timings. */
  readonly steps?: readonly RecoveryStep[];
}

/** One step of a coordinator-driven recovery action (FissLock S1/S2/S3). */
export interface RecoveryStep {
  readonly stage: 'S1' | 'S2' | 'S3';
  readonly startNs: number;
  readonly endNs: number;
  readonly detail: string;
}

/** The recovery after one member was declared dead, under the epoch of the view that said so. */
export interface Recovery {
  readonly seq: number;
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
  readonly epoch: bigint;
  readonly detectedAtNs: number;
  readonly actions: readonly RecoveryAction[];
  /** When every action was over; undefined while in progress. */
  readonly doneAtNs?: number;
}

export interface FailedMember {
  readonly role: string;
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
}

export interface RecoveryBookOptions {
  /** The protocols whose locks a failure concerns, with their rules; none when omitted (a memory node's table is still booked). */
  readonly protocols?: ProtocolRecoveries;
  /** Overrides of the rules' lease bounds, per protocol, for deployments with other options. */
  readonly leaseBoundsMs?: Readonly<Record<string, number>>;
  /** Finished recoveries kept for Status; the oldest are forgotten first. Default 64. */
  readonly keepDone?: number;
}

export const DEFAULT_KEEP_DONE = 64;

/**
 * The coordinator's recovery bookkeeping, pure over injected time like the failure detector:
 * `begin` when a member is declared dead, `tick` to finish lease-bound actions that are due,
 * `rejoined` to finish actions that waited for the member to restart. Memory is bounded: at most
 * one recovery in progress per member (a new failure of the same member supersedes the old one)
 * and `keepDone` finished ones.
 */
export class RecoveryBook {
  private readonly inProgress = new Map<string, Recovery>();
  private readonly done: Recovery[] = [];
  private readonly keepDone: number;
  private seq = 0;

  constructor(private readonly options: RecoveryBookOptions = {}) {
    this.keepDone = options.keepDone ?? DEFAULT_KEEP_DONE;
  }

  /** Opens the recovery of a member declared dead at `nowNs` in the view of `epoch`. */
  begin(member: FailedMember, epoch: bigint, nowNs: number): Recovery {
    const key = memberKey(member.role, member.id);
    const superseded = this.inProgress.get(key);
    if (superseded) this.finish(key, { ...superseded, doneAtNs: nowNs });
    const actions = [...rulesFor(member.role, this.options.protocols)].map(([protocol, rule]) => this.openAction(protocol, rule, nowNs));
    const recovery: Recovery = { seq: ++this.seq, role: member.role, id: member.id, node: member.node, incarnation: member.incarnation, epoch, detectedAtNs: nowNs, actions };
    this.inProgress.set(key, recovery);
    return this.settle(key, recovery, nowNs);
  }

  /** Finishes the lease actions due by `nowNs`; returns the recoveries that completed. */
  tick(nowNs: number): Recovery[] {
    const completed: Recovery[] = [];
    for (const [key, recovery] of [...this.inProgress]) {
      const actions = recovery.actions.map((a) => (a.mechanism === 'lease' && a.doneAtNs === undefined && a.dueAtNs !== undefined && a.dueAtNs <= nowNs ? { ...a, doneAtNs: a.dueAtNs } : a));
      const next = this.settle(key, { ...recovery, actions }, nowNs);
      if (next.doneAtNs !== undefined) completed.push(next);
    }
    return completed;
  }

  /** The member is back with a new incarnation: what waited for its restart is over. */
  rejoined(role: string, id: string, nowNs: number): Recovery | undefined {
    const key = memberKey(role, id);
    const recovery = this.inProgress.get(key);
    if (!recovery) return undefined;
    const actions = recovery.actions.map((a) => (a.mechanism === 'await-restart' && a.doneAtNs === undefined ? { ...a, doneAtNs: nowNs } : a));
    return this.settle(key, { ...recovery, actions }, nowNs);
  }

  /**
   * A memory node reports (on `ctl.recovery.phase`) that it fenced compute node `node` and cleared
   * its holds for `protocol`: the `fence` actions of that node's open recovery are over. The report
   * must carry the recovery's epoch or a later one; an older report is about an earlier failure.
   */
  reported(node: NodeId, protocol: string, epoch: bigint, nowNs: number): Recovery | undefined {
    for (const [key, recovery] of this.inProgress) {
      if (recovery.role !== 'compute' || recovery.node !== node || epoch < recovery.epoch) continue;
      const actions = recovery.actions.map((a) => (a.mechanism === 'fence' && a.doneAtNs === undefined && (protocol === '' || a.protocol === protocol || a.protocol === '*') ? { ...a, doneAtNs: nowNs } : a));
      return this.settle(key, { ...recovery, actions }, nowNs);
    }
    return undefined;
  }

  /**
   * The coordinator drove `protocol`'s recovery steps (FissLock S1–S3) for the recovery of
   * `role/id`: the action keeps their timings and is over when the last step ended. A recovery
   * that already closed gets the steps too, so Status shows them either way.
   */
  recordSteps(role: string, id: string, protocol: string, steps: readonly RecoveryStep[], nowNs: number): Recovery | undefined {
    const endNs = steps.reduce((end, s) => Math.max(end, s.endNs), 0) || nowNs;
    const withSteps = (recovery: Recovery): Recovery => ({
      ...recovery,
      actions: recovery.actions.map((a) => (a.protocol === protocol ? { ...a, steps, doneAtNs: a.doneAtNs ?? endNs } : a)),
    });
    const key = memberKey(role, id);
    const open = this.inProgress.get(key);
    if (open) return this.settle(key, withSteps(open), nowNs);
    for (let i = this.done.length - 1; i >= 0; i--) {
      const done = this.done[i] as Recovery;
      if (done.role === role && done.id === id) return (this.done[i] = withSteps(done));
    }
    return undefined;
  }

  /** In progress first (oldest first), then finished ones, newest last. */
  all(): Recovery[] {
    return [...this.inProgress.values(), ...this.done];
  }

  get activeCount(): number {
    return this.inProgress.size;
  }

  private openAction(protocol: string, rule: RecoveryRule, nowNs: number): RecoveryAction {
    const base = { protocol, mechanism: rule.mechanism, action: rule.action };
    if (rule.mechanism === 'none') return { ...base, doneAtNs: nowNs };
    // no deadline: over when the member is back, or when the coordinator has run the steps
    if (rule.mechanism === 'await-restart' || rule.mechanism === 'driven') return base;
    const boundMs = this.options.leaseBoundsMs?.[protocol] ?? rule.boundMs ?? 0;
    return { ...base, dueAtNs: nowNs + Math.ceil(boundMs * NS_PER_MS) };
  }

  /** Stores `recovery`, closing it when every action is over. */
  private settle(key: string, recovery: Recovery, nowNs: number): Recovery {
    if (recovery.actions.every((a) => a.doneAtNs !== undefined)) {
      const last = Math.max(recovery.detectedAtNs, ...recovery.actions.map((a) => a.doneAtNs ?? nowNs));
      const closed = { ...recovery, doneAtNs: last };
      this.finish(key, closed);
      return closed;
    }
    this.inProgress.set(key, recovery);
    return recovery;
  }

  private finish(key: string, recovery: Recovery): void {
    this.inProgress.delete(key);
    this.done.push(recovery);
    while (this.done.length > this.keepDone) this.done.shift();
  }
}

function memberKey(role: string, id: string): string {
  return `${role}/${id}`;
}
