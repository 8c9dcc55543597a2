// Time from a compute node's crash until survivors acquire its locks, per protocol:
//   node tools/bench/dist/crash-recovery-figure.js [--rounds N] [--protocols a,b] [--out FILE]
// (default protocols: every one; the switch family gets a switch-dataplane running its program)
// A live local cluster per switch program (NATS, coordinator, one memory node, two compute nodes,
// and for the switch family a switch-dataplane; RDMA protocols share one without). Per protocol and
// round: a contended run on 3 locks, SIGKILL of compute-2 mid-run, then for each lock the time from
// the kill to the first survivor grant. The dead node held some of those locks (which ones died
// with it), so the largest per-lock time is the figure: every lock was usable again by then.
// compute-2 is restarted (a new incarnation) between rounds. Prints a table and writes the JSON to
// bench-results/crash-recovery.json (or --out).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { announceLockTable } from '@lockfabric/coordinator/service';
import { fromBinary } from '@bufbuild/protobuf';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { RecoveryPhaseSchema } from '@lockfabric/wire';
import { protocolById } from '@lockfabric/lock-catalog';
import { RealClock } from '@lockfabric/realtime';
import { LocalChaos, liveOptions, repoRootForBench, runLive, startLocalCluster, stopLocalCluster } from '@lockfabric/workload-driver';
import type { ClusterState } from '@lockfabric/workload-driver';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, protocols: { type: 'string' }, out: { type: 'string' } } });
const rounds = Math.max(1, Number(values.rounds ?? 3));
const MS = 1_000_000;
const MISSES = 10;
const HEARTBEAT_MS = 100;
const LOCKS = 3;
const CLIENTS = 8;
const TIMEOUT_MS = 1_500;
/** The services' RealClock (one machine-wide time base), so our times compare with history times. */
const clock = new RealClock();
const nowNs = () => clock.nowNs();

/** Live retransmits of the server-based switch family, sized for NATS round trips. */
const SERVER_OPTIONS = { retransmitMs: '20', maxAttempts: '25' };

/** Live options of each protocol (leases sized for the emulated fabric), how it recovers, and its switch program. */
const PROTOCOLS: Record<string, { options: Readonly<Record<string, string | number | boolean>>; mechanism: string; program?: 'forward' | 'netlock' | 'fisslock' }> = {
  caslock: { options: {}, mechanism: 'fence + memory-node clear' },
  drtm: { options: { leaseMs: '50', driftNs: '1000000', txMarginNs: '20000000' }, mechanism: 'fence + clear (writers), lease (readers)' },
  dslr: { options: { leaseMs: '200', waitUnitNs: '100000', restartOnAbort: 'true' }, mechanism: 'lease (2λ stall, λ = 200 ms)' },
  'dslr-backoff': { options: { leaseMs: '200', waitUnitNs: '100000', restartOnAbort: 'true' }, mechanism: 'lease (2λ stall, λ = 200 ms)' },
  shiftlock: { options: {}, mechanism: 'lease (3·T_lease) + era-fenced reset' },
  declock: { options: { acquireTimeoutMs: '100' }, mechanism: 'waiter timeout reset (100 ms), finished past the dead node at the coordinator notice' },
  'declock-cql': { options: { acquireTimeoutMs: '100' }, mechanism: 'as declock' },
  // A release waits 200 ms live for a successor's link before it cuts the queue (README of lock-mcs).
  mcs: { options: { releaseLinkTimeoutNs: '200000000' }, mechanism: 'coordinator: gate, drain, abort waiters, table reset' },
  alock: { options: { releaseLinkTimeoutNs: '200000000' }, mechanism: 'as mcs (both cohort tails and the victim word)' },
  // compute-1 (the lowest id) is srvlock's server and survives; parlock's locks homed on compute-2 move to compute-1.
  srvlock: { options: SERVER_OPTIONS, program: 'forward', mechanism: 'lock server drops the dead node\'s holds at the coordinator notice' },
  parlock: { options: SERVER_OPTIONS, program: 'forward', mechanism: 'as srvlock; the dead node\'s home locks fail over to compute-1' },
  netlock: { options: SERVER_OPTIONS, program: 'netlock', mechanism: 'coordinator: PurgeNetLockMachine on the switch queues, lock server for the rest' },
  fisslock: { options: liveOptions('fisslock'), program: 'fisslock', mechanism: 'coordinator: S1–S3 over the survivor' },
};
const chosen = values.protocols ? values.protocols.split(',') : Object.keys(PROTOCOLS);

const root = repoRootForBench();
const outFile = values.out ?? join(root, 'bench-results', 'crash-recovery.json');
const log = (line: string) => process.stderr.write(line + '\n');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Round {
  /** Per lock: ms from the kill to the first survivor grant; null when none came before the run ended. */
  readonly firstGrantMs: (number | null)[];
  readonly allLocksBackMs: number | null;
  /** Locks compute-2's clients held at the kill (granted, release not yet asked): the ones that had to be recovered. */
  readonly heldByVictim: number[];
  /** A survivor was (wrongly) declared dead and fenced in this round: its figure does not count. */
  readonly survivorFenced: boolean;
  readonly survivorAcquireFailures: number;
}

const env = { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) };
const results: Record<string, { mechanism: string; program: string; victimHeldPerRound: number[]; rounds: Round[]; medianMs: number | null; maxMs: number | null; neverRounds: number }> = {};
for (const protocol of chosen) if (!PROTOCOLS[protocol]) throw new Error(`no crash-recovery settings for ${protocol}; known: ${Object.keys(PROTOCOLS).join(', ')}`);
// One cluster per switch program (none for the RDMA protocols), in the order the protocols were asked.
const programs = [...new Set(chosen.map((p) => PROTOCOLS[p]?.program ?? 'none'))];
for (const program of programs) {
  const dir = join(root, '.lockfabric', `crash-recovery-${process.pid}-${program}`);
  log(`cluster ${program === 'none' ? 'without a switch' : `with switch program ${program}`}`);
  const state = await startLocalCluster({ dir, lockCount: 65_536, clientsPerComputeNode: 64, withSwitch: program !== 'none', ...(program !== 'none' ? { switchProgram: program } : {}), readyTimeoutMs: 60_000, env });
  try {
    await measureGroup(dir, state, chosen.filter((p) => (PROTOCOLS[p]?.program ?? 'none') === program));
  } finally {
    await stopLocalCluster(dir, 5_000);
  }
}

async function measureGroup(dir: string, state: ClusterState, protocols: readonly string[]): Promise<void> {
  const nc = await connectNats({ servers: state.natsUrl, name: 'crash-recovery-figure', logger: silentLogger });
  // Memory nodes report each compute node they fence; every fenced node must restart to be admitted again.
  const fenced = new Set<number>();
  nc.subscribe(createSubjects(state.cluster).recovery('phase'), {
    callback: (error, msg) => {
      if (!error) fenced.add(fromBinary(RecoveryPhaseSchema, msg.data).node);
    },
  });
  const memory = state.processes.find((p) => p.role === 'memory');
  const fencedNow = async () => {
    const text = await (await fetch(`http://127.0.0.1:${memory?.health}/metrics`)).text();
    return Number(text.split('\n').find((l) => l.startsWith('lockfabric_memory_fenced_nodes '))?.split(' ')[1] ?? 0);
  };
  try {
    const chaos = new LocalChaos(dir);
    const subjects = createSubjects(state.cluster);
    for (const protocol of protocols) {
      const entry = PROTOCOLS[protocol]!;
      const shared = protocolById(protocol).modes.includes('shared');
      const list: Round[] = [];
      for (let round = 0; round < rounds; round++) {
        log(`${protocol}: round ${round + 1}/${rounds}`);
        await announceLockTable(nc, subjects, protocol, LOCKS);
        const run = runLive({
          state: chaos.state(),
          protocol,
          protocolOptions: entry.options,
          spec: { clients: CLIENTS, locks: LOCKS, readRatio: shared ? 0.3 : 0, distribution: 'uniform', durationMs: 3_000, thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 31 + round, timeoutMs: TIMEOUT_MS },
          tolerateNodeFailures: true,
        });
        await sleep(900);
        const killedAtNs = nowNs();
        await chaos.kill('compute-2');
        const result = await run;
        const firstGrantMs = Array.from({ length: LOCKS }, (_, lock) => {
          const grants = result.history.filter((e) => e.lock === lock && e.op === 'acquire' && e.phase === 'ok' && e.timeNs >= killedAtNs).map((e) => e.timeNs);
          return grants.length === 0 ? null : (Math.min(...grants) - killedAtNs) / MS;
        });
        const allLocksBackMs = firstGrantMs.includes(null) ? null : Math.max(...(firstGrantMs as number[]));
        const open = new Map<string, number>();
        for (const e of result.history) {
          if (e.timeNs >= killedAtNs || !e.client.startsWith('2/')) continue;
          if (e.op === 'acquire' && e.phase === 'ok') open.set(`${e.client}#${e.lock}`, e.lock);
          if (e.op === 'release' && e.phase === 'invoke') open.delete(`${e.client}#${e.lock}`);
        }
        const heldByVictim = [...new Set(open.values())].sort((a, b) => a - b);
        const survivorFenced = [...fenced].some((node) => node !== 2);
        const survivorAcquireFailures = result.summary.acquireFailures;
        list.push({ firstGrantMs, allLocksBackMs, heldByVictim, survivorFenced, survivorAcquireFailures });
        if (survivorFenced) log(`${protocol}: a survivor was declared dead in round ${round + 1}; the round does not count`);
        // compute-2 comes back as a new incarnation (a node declared dead stays fenced until then);
        // so does a survivor the loaded machine made look dead.
        await sleep(1_000);
        const restart = new Set([2, ...fenced]);
        fenced.clear();
        for (const node of restart) await chaos.restart(`compute-${node}`);
        const deadline = Date.now() + 20_000;
        while ((await fencedNow()) > 0 && Date.now() < deadline) await sleep(100);
      }
      const backs = list.filter((r) => !r.survivorFenced).map((r) => r.allLocksBackMs);
      const known = backs.filter((v): v is number => v !== null).sort((a, b) => a - b);
      results[protocol] = {
        mechanism: entry.mechanism,
        program: entry.program ?? 'none',
        victimHeldPerRound: list.map((r) => r.heldByVictim.length),
        rounds: list,
        neverRounds: backs.length - known.length,
        // A round in which some lock never came back makes the max "never"; the median is over rounds.
        medianMs: known[Math.floor((backs.length - 1) / 2)] ?? null,
        maxMs: known.length === backs.length ? (known.at(-1) ?? null) : null,
      };
    }
  } finally {
    await nc.close();
  }
}

const figure = {
  machine: { node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString() },
  setup: { computeNodes: 2, clients: CLIENTS, locks: LOCKS, heartbeatMs: HEARTBEAT_MS, missesBeforeSuspect: MISSES, detectionMs: HEARTBEAT_MS * MISSES, acquireTimeoutMs: TIMEOUT_MS, rounds },
  protocols: results,
};
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(figure, null, 2) + '\n');

const fmt = (v: number | null) => (v === null ? 'never' : `${v.toFixed(0)} ms`);
console.log(`Crash recovery: SIGKILL of a compute node until survivors hold every lock again (detection ${HEARTBEAT_MS * MISSES} ms, ${rounds} rounds)`);
console.log(`${'protocol'.padEnd(13)}${'median'.padStart(9)}${'max'.padStart(9)}${'never'.padStart(7)}  ${'victim held'.padEnd(12)}mechanism`);
for (const [protocol, r] of Object.entries(results)) {
  console.log(`${protocol.padEnd(13)}${fmt(r.medianMs).padStart(9)}${fmt(r.maxMs).padStart(9)}${`${r.neverRounds}/${r.rounds.length}`.padStart(7)}  ${r.victimHeldPerRound.join(',').padEnd(12)}${r.mechanism}`);
}
console.log(`(victim held: locks compute-2's clients held at the kill, per round, of ${LOCKS})`);
console.log(`written to ${outFile}`);
