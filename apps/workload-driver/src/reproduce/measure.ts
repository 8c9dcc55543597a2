// Runs one point of an experiment on `sim` through the same entry point as `lockfabric bench`, and
// reduces it to the figures experiments plot.
import { grantTimes, quantileOf } from '@lockfabric/check';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { LockManagerCpuConfig } from '@lockfabric/sim';
import { timeFissLockRecovery } from '@lockfabric/harness';
import { txnWorkloadOf } from '@lockfabric/workloads';
import { nicCeilingFigures } from '../report/nic-ceiling.js';
import { runInMemory } from '../run/in-memory.js';
import { txnReport } from '../run/txn-bench.js';
import type { LockManagerCpuPlan, Measure, PointJob } from './experiment.js';

const SERVER_WORK = new Set<LockPacket['type']>(['acquire', 'release', 'probe', 'transfer', 'free']);
const NOT_AGENT_WORK = new Set<LockPacket['type']>(['grant', 'ack', 'transfer']);

function cpuModel(plan: LockManagerCpuPlan, dedicatedServerMachine: NodeId | undefined): LockManagerCpuConfig {
  return {
    packetNs: plan.packetNs,
    coresFor: (machine) => (machine === dedicatedServerMachine ? plan.coresServer : plan.coresNode),
    isWork: plan.work === 'server' ? (p, machine) => p.dst === machine && SERVER_WORK.has(p.type) : (p) => !NOT_AGENT_WORK.has(p.type),
  };
}

/** The spec as the harness takes it: a transactional spec gets its population's lock count. */
function specOf(job: PointJob): PointJob['spec'] {
  const txn = job.spec.transactions;
  return txn ? { ...job.spec, locks: txnWorkloadOf(txn).lockCount } : job.spec;
}

export async function measurePoint(job: PointJob): Promise<Measure> {
  const started = performance.now();
  if (job.recovery) return measureRecovery(job.recovery, started);
  const clientNodes = Array.from({ length: job.computeNodes }, (_, i) => i).filter((i) => !job.dedicatedServer || i > 0);
  // Compute node ids follow the memory nodes' (0 … memoryNodes−1): the dedicated server is the first.
  const serverMachine = job.dedicatedServer ? job.memoryNodes : undefined;
  const spec = specOf(job);
  const result = await runInMemory({
    substrate: 'sim',
    protocol: job.protocol,
    protocolOptions: job.options,
    spec,
    computeNodes: job.computeNodes,
    memoryNodes: job.memoryNodes,
    clientComputeNodes: clientNodes,
    ...(job.colocatedClients ? { colocatedClients: job.colocatedClients } : {}),
    ...(job.switchLinks ? { switchLinks: job.switchLinks } : {}),
    ...(job.costModel ? { costModel: job.costModel } : {}),
    ...(job.lockManagerCpu ? { lockManagerCpu: cpuModel(job.lockManagerCpu, serverMachine) } : {}),
  });
  const s = result.summary;
  const grants = job.lockManagerCpu ? grantTimes(result.history) : undefined;
  const txn = spec.transactions ? txnReport(result.history, spec.transactions, s.elapsedNs) : undefined;
  const verbs = Object.values(result.accounting.flat()).reduce((a, b) => a + b, 0);
  const acquireVerbs = Object.values(result.accounting.counts.acquire).reduce((a, b) => a + b, 0);
  const writer = result.accounting.phases.meansUs()['acquire-exclusive']?.us;
  const writerIaUs = writer?.['initial-atomic'] ?? NaN;
  const writerWaitUs = writer ? Object.entries(writer).reduce((sum, [phase, us]) => (phase === 'initial-atomic' ? sum : sum + (us ?? 0)), 0) : NaN;
  return {
    goodputMops: s.throughput / 1e6,
    p50Us: s.latencyUs.p50,
    p99Us: s.latencyUs.p99,
    p999Us: s.latencyUs.p999,
    meanUs: s.latencyUs.mean,
    grantP50Us: grants && grants.count > 0 ? quantileOf(grants.grantNs, 0.5) / 1_000 : NaN,
    grantP90Us: grants && grants.count > 0 ? quantileOf(grants.grantNs, 0.9) / 1_000 : NaN,
    writerIaUs,
    writerWaitUs,
    verbsPerOp: s.acquires > 0 ? verbs / s.acquires : 0,
    verbsPerAcquire: s.acquires > 0 ? acquireVerbs / s.acquires : 0,
    mnNicCeilingPct: memoryNicCeilingPct(result, job.memoryNodes),
    committedKtps: txn ? txn.committedPerSec / 1e3 : NaN,
    recoveryMs: NaN,
    acquires: s.acquires,
    failures: s.acquireFailures + s.releaseFailures,
    checkerOk: result.verdict.ok && (txn ? txn.serializable : true),
    wallMs: performance.now() - started,
  };
}

/** The busiest memory node's share of its NIC ceiling, in % (memory nodes are nodes 0 … memoryNodes−1). */
function memoryNicCeilingPct(result: Awaited<ReturnType<typeof runInMemory>>, memoryNodes: number): number {
  if (!result.costModel) return NaN;
  const use = nicCeilingFigures(result.nicLoads ?? {}, result.summary.elapsedNs, result.costModel.nic).nicUtilisation;
  if (!use) return NaN;
  const shares = Array.from({ length: memoryNodes }, (_, node) => use[String(node)] ?? 0);
  return 100 * Math.max(...shares);
}

let recoveryWarm = false;

/** A recovery job: one timed FissLock recovery; only `recoveryMs` (and the checker bit) mean anything. */
async function measureRecovery(recovery: NonNullable<PointJob['recovery']>, started: number): Promise<Measure> {
  // The first recovery in a thread runs cold (unoptimised code); one small one first, untimed.
  if (!recoveryWarm) {
    await timeFissLockRecovery(2_000, recovery.machines);
    recoveryWarm = true;
  }
  // Small recoveries take about a millisecond, where one collection pause doubles a step: the
  // fastest of several repetitions (as many as fit in about 200 000 lock recoveries, at most 10).
  const repetitions = Math.min(10, Math.max(1, Math.round(200_000 / recovery.heldLocks)));
  let ms = Infinity;
  let problems = 0;
  for (let r = 0; r < repetitions; r++) {
    const t = await timeFissLockRecovery(recovery.heldLocks, recovery.machines);
    ms = Math.min(ms, { S1: t.s1Ms, S2: t.s2Ms, S3: t.s3Ms }[recovery.phase]);
    problems += t.problems;
  }
  return {
    goodputMops: NaN,
    p50Us: NaN,
    p99Us: NaN,
    p999Us: NaN,
    meanUs: NaN,
    grantP50Us: NaN,
    grantP90Us: NaN,
    writerIaUs: NaN,
    writerWaitUs: NaN,
    verbsPerOp: NaN,
    verbsPerAcquire: NaN,
    mnNicCeilingPct: NaN,
    committedKtps: NaN,
    recoveryMs: ms,
    acquires: 0,
    failures: problems,
    // A recovery that finds inconsistencies in a consistent state is a failed run.
    checkerOk: problems === 0,
    wallMs: performance.now() - started,
  };
}
