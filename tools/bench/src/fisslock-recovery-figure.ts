// FissLock recovery time split into S1/S2/S3 against held locks (paper Fig. 17 middle, spec §7.2, §10.3):
//   node tools/bench/dist/fisslock-recovery-figure.js [--locks 1000,10000,100000,1000000] [--machines 8] [--out FILE]
// In-process: real agent pools and a real switch model in one process, a simultaneous failure of
// the switch (registers lost) and one server, each step timed with performance.now. Writes
// bench-results/fisslock-recovery.json (or --out) and prints a table.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { AgentPool, recoverInProcess } from '@lockfabric/lock-fisslock';
import type { ClientRecord, DeciderControl, RecoveryClientView } from '@lockfabric/lock-fisslock';
import type { Clock, LockMode, NodeId, SwitchPort } from '@lockfabric/ports';
import { Switch, fissLockDecider } from '@lockfabric/switch';
import { repoRootForBench } from '@lockfabric/workload-driver';

const { values } = parseArgs({ options: { locks: { type: 'string' }, machines: { type: 'string' }, out: { type: 'string' } } });
const lockCounts = (values.locks ?? '1000,10000,100000,1000000').split(',').map((s) => Number(s.trim()));
const machines = Number(values.machines ?? 8);
const outFile = values.out ?? join(repoRootForBench(), 'bench-results', 'fisslock-recovery.json');
const log = (line: string) => process.stderr.write(line + '\n');

const idleClock: Clock = { nowNs: () => Math.round(performance.now() * 1e6), sleep: () => new Promise(() => undefined) };
const nowNs = () => performance.now() * 1e6;

/** A port that goes nowhere: the figure times the recovery steps, not the network. */
function silentPort(machine: NodeId): SwitchPort {
  return { machine, send: () => undefined, onPacket: () => () => undefined };
}

/** The clients of one machine as S1 sees them: one record per held lock (and per waiting request). */
class Ledger implements RecoveryClientView {
  readonly granted: { lid: number; task: number; mode: LockMode }[] = [];
  readonly waiting: { lid: number; task: number; mode: LockMode; startNs: number }[] = [];
  constructor(private readonly machine: NodeId) {}
  recoveryRecords(): ClientRecord[] {
    const mid = this.machine;
    return [
      ...this.granted.map((g) => ({ lid: g.lid, mid, task: g.task, mode: g.mode, state: 'granted' as const, startNs: 0 })),
      ...this.waiting.map((w) => ({ lid: w.lid, mid, task: w.task, mode: w.mode, state: 'pending' as const, startNs: w.startNs })),
    ];
  }
  recoveryAbort(): void {}
}

interface Row {
  readonly heldLocks: number;
  readonly s1Ms: number;
  readonly s2Ms: number;
  readonly s3Ms: number;
  readonly totalMs: number;
  readonly agentsAfter: number;
  readonly registersWritten: number;
  readonly problems: number;
}

/**
 * `held` locks spread round-robin over `machines` machines (ids 1…): every lock held by one task of
 * its agent's machine; every 4th lock shared with a second holder on the next machine, every 8th
 * with a waiter on the machine after. Machine `machines` fails together with the switch.
 */
async function measure(held: number): Promise<Row> {
  const sw = new Switch(fissLockDecider({ lockCount: Math.max(held, 1_024) }));
  const ids = Array.from({ length: machines }, (_, k) => k + 1);
  const options = { policy: 'read-preferring' as const, rtoNs: 1e9, pacingNs: 0, starvePeriodNs: 1e9, mutantNoDuplicateSuppression: false };
  const pools = new Map(ids.map((m) => [m, new AgentPool(m, silentPort(m), idleClock, options)]));
  const ledgers = new Map(ids.map((m) => [m, new Ledger(m)]));
  for (const [m, pool] of pools) pool.recoveryClients.add(ledgers.get(m) as Ledger);
  let task = 0;
  for (let lid = 0; lid < held; lid++) {
    const home = ids[lid % machines] as NodeId;
    const shared = lid % 4 === 0;
    const mode: LockMode = shared ? 'shared' : 'exclusive';
    const first = ++task;
    const holders = new Set([`${home}:${first}`]);
    ledgers.get(home)?.granted.push({ lid, task: first, mode });
    if (shared) {
      const other = ids[(lid + 1) % machines] as NodeId;
      const second = ++task;
      holders.add(`${other}:${second}`);
      ledgers.get(other)?.granted.push({ lid, task: second, mode });
    }
    const wqueue = [];
    if (lid % 8 === 0) {
      const waiter = ids[(lid + 2) % machines] as NodeId;
      const t = ++task;
      wqueue.push({ mid: waiter, task: t, mode: 'exclusive' as const });
      ledgers.get(waiter)?.waiting.push({ lid, task: t, mode: 'exclusive', startNs: lid });
    }
    pools.get(home)?.agents.set(lid, { mode, inca: shared ? 1 : 0, holders, wqueue });
  }
  const failed = machines as NodeId;
  sw.restart(); // S0: the switch comes back with every register at its initial value
  const control: DeciderControl = sw.registerControl();
  const survivors = ids.filter((m) => m !== failed).map((m) => pools.get(m) as AgentPool);
  const outcome = await recoverInProcess({ epoch: 1, survivors, failed: [failed], control, policy: 'read-preferring', nowNs });
  for (const pool of pools.values()) pool.stop();
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  return {
    heldLocks: held,
    s1Ms: ms(outcome.times.s1Ns),
    s2Ms: ms(outcome.times.s2Ns),
    s3Ms: ms(outcome.times.s3Ns),
    totalMs: ms(outcome.times.s1Ns + outcome.times.s2Ns + outcome.times.s3Ns),
    agentsAfter: outcome.plan.agents.length,
    registersWritten: outcome.registersWritten,
    problems: outcome.problems.length,
  };
}

const rows: Row[] = [];
for (const held of lockCounts) {
  log(`held locks ${held}…`);
  rows.push(await measure(held));
}
const figure = {
  figure: 'fisslock-recovery',
  paper: 'FissLock OSDI 2024, Fig. 17 (middle): recovery time breakdown S1/S2/S3 against the number of locks',
  method: `in-process (one Node process, real time by performance.now around each step): ${machines} agent pools, a switch failure (registers reset, S0) together with machine ${machines}; S1 pause + reports, S2 repair + apply, S3 switch register writes through the control-plane API`,
  machine: { node: process.version, date: new Date().toISOString() },
  rows,
};
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(figure, null, 2) + '\n');
console.log('held locks |   S1 ms |   S2 ms |   S3 ms | total ms | agents after | registers written | problems');
for (const r of rows) {
  console.log(
    `${String(r.heldLocks).padStart(10)} | ${r.s1Ms.toFixed(2).padStart(7)} | ${r.s2Ms.toFixed(2).padStart(7)} | ${r.s3Ms.toFixed(2).padStart(7)} | ${r.totalMs.toFixed(2).padStart(8)} | ${String(r.agentsAfter).padStart(12)} | ${String(r.registersWritten).padStart(17)} | ${r.problems}`,
  );
}
log(`written to ${outFile}`);
