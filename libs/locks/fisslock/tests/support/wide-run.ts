import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { FaultSpec } from '@lockfabric/switch';
import type { FissGrant } from '../../src/client.js';
import { repairLockInProcess } from '../../src/recovery/lock-repair.js';
import { createStuckTriage } from '../../src/recovery/stuck-triage.js';
import { deciderControlOf, fissSim } from './fiss-sim.js';
import type { FissSimOptions } from './fiss-sim.js';
import { checkEndState, NOT_CHECKED } from './end-state.js';
import type { EndState } from './end-state.js';
import { AgentAudit, describeStall } from './sweep.js';
import { ExclusionMonitor, mulberry, startWorkers } from './workload.js';

export { FAULTS_2, FAULTS_10 } from './workload.js';

export interface WideOptions {
  readonly faults?: FaultSpec;
  /** Locks the workers pick from (the decider holds 8). */
  readonly hotLocks?: number;
  readonly clientsPerNode?: number;
  readonly ops?: number;
  readonly maxEvents?: number;
  /** How long a worker holds a lock (default 20–220 µs). */
  readonly holdNs?: (rnd: () => number) => number;
  /** Keep a log of every packet of these locks (both directions, with virtual time). */
  readonly logLocks?: readonly number[];
  /** Test-only decider mutant (shows the exclusion check fails on a broken protocol). */
  readonly mutantNoIncarnationCheck?: boolean;
  /** FissLock options of every client and agent pool (e.g. a short `rtoNs`). */
  readonly protocolOptions?: ProtocolOptions;
  /**
   * Spec §12.9: clients keep recovery records and the T_STUCK watchdog's reports go through the
   * coordinator's triage (stuck-triage.ts): a definite one, or a stalled queue the pools' records
   * confirm, gets a per-lock S1–S3 repair (repairLockInProcess). `tStuckNs` goes to the protocol
   * options (default the protocol's); `off` keeps the recoverable clients but never repairs (the
   * mutant); `mutantRepairSuspicionUnconfirmed` repairs suspicions without asking.
   */
  readonly watchdog?: { readonly tStuckNs?: number; readonly off?: boolean; readonly mutantRepairSuspicionUnconfirmed?: boolean };
}

/** The triage's bounds at sim scale: a run lasts milliseconds, so the live rate (5/s) would drop nearly every suspicion. */
const SIM_TRIAGE = { suspicionsPerSecond: 100_000, suspicionBurst: 100 } as const;

export interface WideResult {
  readonly violations: string[];
  readonly granted: number;
  readonly timedOut: number;
  readonly untyped: number;
  readonly unfinished: number;
  /** Workers still running when the event budget ran out, with what was pending then. */
  readonly stalled: string | undefined;
  /** Most live agents one lock had at a grant (must be ≤ 1). */
  readonly agentsPerLockMax: number;
  /** Grants at which a live agent's mode differed from the decider's (Lemma 1; must be 0). */
  readonly modeMismatch: number;
  readonly log: string[];
  /** Agent-pool counters summed over the machines. */
  readonly counters: Record<string, number>;
  /** The run ended with no event left (every retransmission settled). */
  readonly quiescent: boolean;
  /** The end-state check (end-state.ts); empty when the run did not end quiescent. */
  readonly endState: EndState;
  /** Per-lock repairs run for the watchdog's reports (spec §12.9: a metric of its own, not a failure). */
  readonly repairs: number;
  /** Watchdog suspicions (stalled queues) the clients' records showed to be long holds (stuck-triage.ts). */
  readonly dismissed: number;
  /** Problems the repairs' plan check found (must be empty). */
  readonly repairProblems: string[];
}

/**
 * The recovery-sim workload without a failure: 8 locks on the decider, workers on 3 nodes take one
 * of `hotLocks` in a random mode and hold it 20–220 µs (long against the RTO, so packets of several
 * holders, waiters and transfers overlap). Exclusion is checked online at every grant.
 */
export async function runWide(seed: number, options: WideOptions = {}): Promise<WideResult> {
  const log: string[] = [];
  const logged = new Set(options.logLocks ?? []);
  const tap = (direction: 'in' | 'out', machine: NodeId, p: LockPacket, nowNs: number): void => {
    if (logged.has(p.lock)) log.push(`${nowNs} ${direction === 'out' ? `${machine}->sw` : `sw->${machine}`} ${describePacket(p)}`);
  };
  const simOptions: FissSimOptions = {
    seed,
    locks: 8,
    computeNodes: 3,
    mutantNoIncarnationCheck: options.mutantNoIncarnationCheck === true,
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.protocolOptions || options.watchdog?.tStuckNs !== undefined
      ? { protocolOptions: { ...options.protocolOptions, ...(options.watchdog?.tStuckNs !== undefined ? { tStuckNs: options.watchdog.tStuckNs } : {}) } }
      : {}),
    ...(logged.size > 0 ? { tap } : {}),
    ...(options.watchdog ? { recoverableClients: true } : {}),
  };
  const sim = fissSim(simOptions);
  let repairs = 0;
  let dismissed = 0;
  const repairProblems: string[] = [];
  if (options.watchdog && options.watchdog.off !== true) {
    const pools = sim.nodes.map((n) => sim.pool(n));
    const poolOf = new Map(pools.map((p) => [p.machine, p]));
    const control = deciderControlOf(sim.sw);
    // the coordinator's rule (stuck-triage.ts), over the pools' own reports: answered in the same turn
    const triage = createStuckTriage({
      clock: sim.cluster.clock,
      ...SIM_TRIAGE,
      ask: (lid) => pools.map((p) => ({ machine: p.machine, report: p.lockReport(lid) })),
      onOutcome: (report, outcome) => {
        // a lock in repair stays flagged until the repair clears it; otherwise it may be flagged again
        if (outcome === 'repair' || outcome === 'busy') return;
        if (outcome === 'dismissed') dismissed++;
        poolOf.get(report.machine)?.dismissStuck(report.lock);
      },
      repair: (report) => {
        const lid = report.lock;
        const pool = poolOf.get(report.machine)!;
        if (logged.has(lid)) log.push(`${sim.cluster.clock.nowNs()} STUCK lock=${lid} on ${pool.machine}: ${report.reason}`);
        return repairLockInProcess({ lid, pools, control, policy: pool.options.policy, clock: sim.cluster.clock, quietNs: 500_000 }).then((outcome) => {
          repairs++;
          repairProblems.push(...outcome.problems.map((p) => `repair of lock ${lid}: ${p}`));
          if (!outcome.drained) repairProblems.push(`repair of lock ${lid}: the drain did not end quiet`);
          if (logged.has(lid)) log.push(`${sim.cluster.clock.nowNs()} REPAIRED lock=${lid} held=${JSON.stringify(outcome.held)} wake=${JSON.stringify(outcome.plan.wake)}`);
        });
      },
      ...(options.watchdog.mutantRepairSuspicionUnconfirmed === true ? { mutantRepairSuspicionUnconfirmed: true } : {}),
    });
    for (const pool of pools) pool.onStuckLock = (report) => void triage.handle({ machine: pool.machine, lock: report.lid, reason: report.reason });
  }
  const clientsPerNode = options.clientsPerNode ?? 2;
  const ops = options.ops ?? 40;
  const now = (): number => sim.cluster.clock.nowNs();
  const monitor = new ExclusionMonitor();
  const audit = new AgentAudit(sim);
  const { counts, done } = startWorkers<FissGrant>({
    nodes: sim.nodes,
    clientsPerNode,
    ops,
    lockCount: options.hotLocks ?? 4,
    timeoutMs: 200,
    rnd: mulberry(seed),
    clock: sim.cluster.clock,
    monitor,
    label: () => `seed ${seed} @${now()}`,
    client: (node, k) => sim.client(node, k),
    holdNs: options.holdNs ?? ((rnd) => 20_000 + Math.floor(rnd() * 200_000)),
    gapNs: (rnd) => Math.floor(rnd() * 50_000),
    onGranted: (lock, who, grant, found) => {
      audit.check(lock);
      if (!logged.has(lock)) return;
      for (const v of found) log.push(`${now()} VIOLATION ${v} (task ${grant.task})`);
      log.push(`${now()} HOLD ${who} ${grant.mode} task ${grant.task}`);
    },
    onReleased: (lock, who, grant) => {
      if (logged.has(lock)) log.push(`${now()} RELEASE ${who} task ${grant.task}`);
    },
  });
  const outcome = await sim.scheduler.run({ untilNs: 5_000_000_000, maxEvents: options.maxEvents ?? 3_000_000 });
  const stalled = counts.finished ? undefined : describeStall(sim, outcome);
  if (counts.finished) await done;
  const quiescent = outcome.reason === 'idle';
  const endState = counts.finished && quiescent ? checkEndState(sim) : NOT_CHECKED;
  const counters: Record<string, number> = {};
  for (const node of sim.nodes) for (const [k, v] of Object.entries(sim.pool(node).counters)) counters[k] = (counters[k] ?? 0) + v;
  await sim.stop();
  const { granted, timedOut, untyped } = counts;
  const unfinished = sim.nodes.length * clientsPerNode * ops - granted - timedOut - untyped;
  return { violations: monitor.violations, granted, timedOut, untyped, unfinished, stalled, agentsPerLockMax: audit.agentsPerLockMax, modeMismatch: audit.modeMismatch, log, counters, quiescent, endState, repairs, dismissed, repairProblems };
}

const FLAG_NAMES = ['AGENT', 'INVALID', 'GRANTED', 'BOUNCED', 'DUP', 'ABORT', 'REACHED', 'WW', 'CURSH'];

function describePacket(p: LockPacket): string {
  const flags = FLAG_NAMES.filter((_, i) => (p.flags & (1 << i)) !== 0);
  const status = p.type === 'ack' ? ` status=${['accepted', 'bounced', 'duplicate', 'freed'][(p.flags >>> 9) & 3]}` : '';
  const waiters = p.flags >>> 16 ? ` waiters=${p.flags >>> 16}` : '';
  return `${p.type} lock=${p.lock} m=${p.machine} task=${p.task} ${p.mode} inca=${p.incarnation} src=${p.agent ?? '-'} seq=${p.seq}${p.dst === undefined ? '' : ` dst=${p.dst}`} [${flags.join(',')}]${status}${waiters}`;
}
