import { parseArgs } from 'node:util';
import { availableProtocols } from '@lockfabric/lock-catalog';
import { COST_MODEL_HELP } from '../cli/cost-model.js';
import { DEFAULT_CLUSTER_DIR } from '../cluster/cluster-dir.js';

// bench's help, apart from the command so that `bench --help` loads neither the live path nor the
// report renderer (main.ts loads this module alone when --help is given).

const BENCH_COMMON_HELP = `lockfabric bench — run one protocol under one workload and report figures

  --protocol, -p ID[,ID…]  protocol id (caslock, dslr, …), or several to compare; default caslock
  --substrate S            sim (virtual time, default) | embedded | live
  --clients, -c N          lock clients (default 8)          --locks, -l N   lock ids (default 1000)
  --read-ratio R           fraction of shared acquires (0)   --distribution  uniform | zipf:<θ> (uniform)
  --lock-ids dense|sparse  sparse: spread lock ids over [0, 2^32) (default dense); for fisslock with --opt lockIds=mapped
  --duration-ms MS         run length                        --operations, -n N  total acquires (default 10000)
  --think-ns NS            pause between operations (0)      --cs-ns NS      critical section (0)
  --cs-verbs N             the critical section first issues N data verbs on the object the lock
                           guards, on its memory node: READ when shared, WRITE when exclusive (0)
  --cs-verb-size BYTES     bytes per data verb (64)
  --timeout-ms MS          acquire timeout                   --seed N        run seed (1)
  --opt KEY=VALUE          protocol option (repeatable)      --history FILE  write the history as JSON lines
  --compute-nodes N        compute nodes (2)                 --cluster-dir D live: use this cluster (${DEFAULT_CLUSTER_DIR})
  --racks R                fisslock: lock ids over R switches, one per rack (FissLock §5.4); compute node i in rack i % R (1)
  --crash-probability P    sim/embedded: a client crashes instead of releasing, per release
  --skip-release-probability P  micro and dynamic: a client skips a release and carries
                           on (ShiftLock Fig. 13); the protocol must recover the lock
  --jitter-ns NS           sim: extra random delay per verb batch and message
${COST_MODEL_HELP}
  --mn-iops N              sim: the memory-node NIC's READ/WRITE ceiling per second (atomics keep the
                           model's share of it); the report gives each NIC's use of its ceiling.
                           live: a temporary cluster's memory nodes serve at most N verbs/s
  --cn-latency-ns NS       sim: one-way CN–CN message latency (DecLock Appendix C)
  --colocated-clients N    the first N clients run on the memory node, beside the lock table (ALock's
                           and MCS's local cohort use the CPU there, no verbs); live: one memory node,
                           verbs protocols; the report sets local against remote clients (placement)
  --mutant-local-verbs     test-only, live: those clients reach the table with verbs (for the check)
  --compute-nodes-at LIST  live: use these compute nodes (host:port,…) instead of a local cluster; one
                           that does not answer is left out (downAtStart), the run goes on without it
  --memory-nodes-at LIST   live: their memory nodes (host:port,…)   --compute-memory-port P[,P…]
                           their descriptor-memory port, one for all or one each (50055)
  --mutant-strict-discovery  test-only: one compute node that does not answer fails the run (exit 4)
  --tick-ms MS             add a timeline: acquires per second and latency in fixed ticks of MS
                           (virtual time on sim), for failure and hotspot timelines
  --floor-ops N            live: after the run, N uncontended operations (one client) set against the
                           bare gRPC and NATS round trips measured in the same run (default 300; 0: off)
  --warmup-ops N           live: N untimed operations of the same workload before the run, so the
                           services run warm code (default 2000; 0: off); checked, not counted
  --trace-ratio R          live, temporary cluster: trace at head-sampling ratio R (0.01 or 1%; 1 = every
                           operation) or off; spans go to $OTEL_EXPORTER_OTLP_ENDPOINT when set, else to a
                           counting sink in this process (the report gives export requests and bytes)
                           A list (off,1%) runs each protocol once per setting, each on its own cluster,
                           and ends the table with the floor ratios side by side
  --report DIR             write report.json, report.html and SVG plots (latency CDF, throughput,
                           verbs per acquire; one plot for all protocols) into DIR
  --insecure               live: a temporary cluster without TLS (loudly logged; default mutual TLS)
  --json                   print one JSON object (several protocols: {kind: "bench", results: […]})
  --workers N              sim, several protocols: run them on N threads at once (this one and N-1 workers); the
                           results (and their order) are the same for any N`;

/** Each workload's own flags: `bench --workload W --help` prints the common flags and W's part. */
const WORKLOAD_HELP: Readonly<Record<'transactions' | 'objectstore' | 'btree' | 'dynamic' | 'smallbank', string>> = {
  transactions: `  --workload, -w W         micro (default: the flags above) | tatp | tpcc | smallbank | trace:FILE (FissLock
                           trace, lines txn_id,0,1,lock_id,mode; mode 1 shared, 2 exclusive).
                           Transactions: strict 2PL, locks in ascending id order, --operations counts
                           transactions; adds committed txn/s, per-type p50/p99, aborts by cause,
                           locks/txn and a conflict-serializability verdict (exit 1 when violated)
  --subscribers N          tatp population (100000)          --warehouses N  tpcc warehouses (10)
  --colocate-warehouses    tpcc on sim: warehouse w and its clients on compute node w mod n, its locks
                           homed there as ParLock homes them (FissLock §7.4; ~90 % local transactions)
  --txn-think-ns NS        execution time with all locks held (2800 tatp, 7000 tpcc, 0 trace)
  --max-attempts N         attempts of an aborted transaction before it is given up (64)
  --mutant-early-release   break 2PL on purpose (free the first lock before taking the next)
  --long-read-probability G  tpcc: with probability G a transaction is a CUSTOMER_SCAN holding its
                           warehouse's table lock --long-read-ns (20000000); writers of customer rows
                           take that lock shared, the scan exclusive (S vs IX; DSLR Fig. 10)
  --long-read-slots K      lease slots the scan draws (1 = fixed lease; K > 1: DSLR multi-slot lease
                           K·λ, with --opt maxSlots=K; DSLR Fig. 11). A commit whose lease ran out is
                           void: aborted as LEASE_EXPIRED and retried
  transactional --timeout-ms defaults to 10 on sim (FissLock's 10 ms abort), 2000 elsewhere`,
  objectstore: `  --workload objectstore   DecLock's object store: get = shared lock + READ, set = exclusive lock +
                           WRITE of the whole object on its memory node; content-checked (exit 1)
  --objects N (100000)  --object-bytes B (414)  --get-ratio R (0.65)  --mutant-skip-lock
  objectstore and btree draw zipf:0.99 unless --distribution is given`,
  btree: `  --workload btree         Sherman-style B+tree on the memory nodes, one lock per node, lock-free
                           lookups; structure-checked after the run (exit 1 when broken)
  --keys N (100000)  --fanout F (32)  --lookup-ratio R (0.5)  --insert-ratio R (0; rest updates)
  --btree-max-nodes N      node slots (default: room for every insert to split)
  --mutant-unlocked-split  a split gives up its node lock before writing (for the check)
  objectstore and btree draw zipf:0.99 unless --distribution is given`,
  dynamic: `  --workload dynamic       FissLock's moving hotspot over the micro loop: --hot-share of requests go
                           to --hot-locks locks that move every --move-every-ms, the rest spread over
                           the other locks; adds a throughput timeline per --tick-ms
  --hot-locks N (2500)  --hot-share R (0.5)  --move-every-ms MS (300)  --tick-ms MS (period/6)
  dynamic defaults: --locks 1000000, --duration-ms 4 periods`,
  smallbank: `  --workload smallbank     live only: accounts in Redis, 15 % balance checks, 85 % transfers;
                           checks at the end that the balances sum and every committed transfer hold
  --accounts N             smallbank accounts (1000000)      --redis URL     redis://HOST:PORT
                           (default: the cluster's, else one started for the run)
  --protocol redlock       smallbank with the redlock library over the same Redis (lease 5 s)
  --mutant-skip-lock       test-only: objectstore ops take no lock; a smallbank transfer locks one of
                           its two accounts`,
};

export const BENCH_HELP = [BENCH_COMMON_HELP, WORKLOAD_HELP.transactions, [WORKLOAD_HELP.objectstore, WORKLOAD_HELP.btree.split('\n').slice(0, -1).join('\n'), WORKLOAD_HELP.dynamic].join('\n'), WORKLOAD_HELP.smallbank].join('\n\n');

/** The help for `--workload W` (W as typed); undefined for an unknown one (the full help then). */
export function workloadHelp(workload: string): string | undefined {
  const part = workload === 'micro' ? '' : workload === 'tatp' || workload === 'tpcc' || workload.startsWith('trace:') ? WORKLOAD_HELP.transactions : WORKLOAD_HELP[workload as keyof typeof WORKLOAD_HELP];
  if (part === undefined) return undefined;
  return `${BENCH_COMMON_HELP}\n\n${part === '' ? '  --workload micro         the flags above (the default)' : part}\n\n(lockfabric bench --help: every workload's flags and every protocol's --opt options)`;
}


/** Every protocol with its summary and the options `--opt` accepts. */
export function protocolHelp(): string {
  return availableProtocols()
    .map((p) => [`${p.id} — ${p.summary}`, ...Object.entries(p.options).map(([name, help]) => `    --opt ${name}=…  ${help}`)].join('\n'))
    .join('\n');
}


/** `bench [--workload W] --help`: the common flags with W's, or every workload's and every protocol's --opt options. */
export async function benchHelpCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { workload: { type: 'string', short: 'w' } }, strict: false, allowPositionals: true });
  const forWorkload = typeof values['workload'] === 'string' ? workloadHelp(values['workload']) : undefined;
  console.log(forWorkload ?? `${BENCH_HELP}\n\n${protocolHelp()}`);
  return 0;
}
