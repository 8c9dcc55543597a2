// FissLock's recovery cost against the number of held locks (FissLock §7.8, Fig. 17 middle): S1
// (pause and collect client records), S2 (repair agents on the survivors) and S3 (rewrite the
// switch registers), each timed in real time around the production recovery steps, in one process.
// The network is left out on purpose: the figure is about how the steps scale with lock state,
// which the paper attributes to scanning every lock's metadata in S1 and S2.
import type { Clock, LockMode, NodeId, SwitchPort } from '@lockfabric/ports';
import { Switch } from '@lockfabric/switch';
import { AgentPool } from '../agent-pool.js';
import { fissLockDecider } from '../switch/index.js';
import type { RecoveryClientView } from './recovery-client.js';
import type { ClientRecord } from './recovery-state.js';
import { recoverInProcess } from './run-recovery.js';

export interface FissRecoveryTiming {
  readonly heldLocks: number;
  readonly s1Ms: number;
  readonly s2Ms: number;
  readonly s3Ms: number;
  /** Agents the survivors hold after S2: one per lock a survivor still holds or waits for. */
  readonly agentsAfter: number;
  readonly registersWritten: number;
  /** Inconsistencies S2 found; a correct recovery of this state finds none. */
  readonly problems: number;
}


/** A port that goes nowhere: the steps are timed, not the network. */
function silentPort(machine: NodeId): SwitchPort {
  return { machine, send: () => undefined, onPacket: () => () => undefined };
}

/** The lock clients of one machine as S1 collects them. */
class Ledger implements RecoveryClientView {
  readonly granted: { lid: number; task: number; mode: LockMode }[] = [];
  readonly waiting: { lid: number; task: number; startNs: number }[] = [];
  constructor(private readonly machine: NodeId) {}
  recoveryRecords(): ClientRecord[] {
    const mid = this.machine;
    return [
      ...this.granted.map((g) => ({ lid: g.lid, mid, task: g.task, mode: g.mode, state: 'granted' as const, startNs: 0 })),
      ...this.waiting.map((w) => ({ lid: w.lid, mid, task: w.task, mode: 'exclusive' as const, state: 'pending' as const, startNs: w.startNs })),
    ];
  }
  recoveryAbort(): void {}
}

/**
 * Times one recovery: `heldLocks` locks spread round-robin over `machines` machines (ids 1…), each
 * held by a task on its agent's machine; every 4th lock is shared with a holder on the next machine
 * and every 8th has an exclusive waiter on the machine after. The last machine fails together with
 * the switch (its registers reset), the case the paper measures. `realNowNs` is the caller's real
 * clock in ns (protocol code reads no ambient time).
 */
export async function timeFissLockRecovery(heldLocks: number, machines: number, realNowNs: () => number): Promise<FissRecoveryTiming> {
  // Agent pools only read the clock here: nothing is sent or retransmitted during the measurement.
  const idleClock: Clock = { nowNs: () => Math.round(realNowNs()), sleep: () => new Promise(() => undefined) };
  const sw = new Switch(fissLockDecider({ lockCount: Math.max(heldLocks, 1_024) }));
  const ids = Array.from({ length: machines }, (_, k) => (k + 1) as NodeId);
  const options = { policy: 'read-preferring' as const, rtoNs: 1e9, pacingNs: 0, starvePeriodNs: 1e9, mutantNoDuplicateSuppression: false };
  const pools = new Map(ids.map((m) => [m, new AgentPool(m, silentPort(m), idleClock, options)]));
  const ledgers = new Map(ids.map((m) => [m, new Ledger(m)]));
  for (const [m, pool] of pools) pool.addRecoveryClient(ledgers.get(m)!);
  let task = 0;
  for (let lid = 0; lid < heldLocks; lid++) {
    const home = ids[lid % machines]!;
    const shared = lid % 4 === 0;
    const mode: LockMode = shared ? 'shared' : 'exclusive';
    const first = ++task;
    const holders = [{ mid: home, task: first }];
    ledgers.get(home)!.granted.push({ lid, task: first, mode });
    if (shared) {
      const other = ids[(lid + 1) % machines]!;
      const second = ++task;
      holders.push({ mid: other, task: second });
      ledgers.get(other)!.granted.push({ lid, task: second, mode });
    }
    const wqueue = [];
    if (lid % 8 === 0) {
      const waiter = ids[(lid + 2) % machines]!;
      const t = ++task;
      wqueue.push({ mid: waiter, task: t, mode: 'exclusive' as const });
      ledgers.get(waiter)!.waiting.push({ lid, task: t, startNs: lid });
    }
    pools.get(home)!.restoreAgent(lid, { mode, inca: shared ? 1 : 0, holders, wqueue });
  }
  const failed = ids[machines - 1]!;
  sw.restart(); // the switch comes back with every register at its initial value
  const survivors = ids.filter((m) => m !== failed).map((m) => pools.get(m)!);
  const outcome = await recoverInProcess({ epoch: 1, survivors, failed: [failed], control: sw.registerControl(), policy: 'read-preferring', nowNs: realNowNs });
  for (const pool of pools.values()) pool.stop();
  const ms = (ns: number) => ns / 1e6;
  return {
    heldLocks,
    s1Ms: ms(outcome.times.s1Ns),
    s2Ms: ms(outcome.times.s2Ns),
    s3Ms: ms(outcome.times.s3Ns),
    agentsAfter: outcome.plan.agents.length,
    registersWritten: outcome.registersWritten,
    problems: outcome.problems.length,
  };
}
