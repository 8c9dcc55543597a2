// Figures of the foundation, measured side by side in one run on this machine:
//   node tools/bench/dist/foundation-figures.js [--quick] [--out FILE]
// Prints a human report and writes the JSON to bench-results/foundation.json (or --out).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { runInMemory as runWithDefinition } from '@lockfabric/harness';
import { protocolById } from '@lockfabric/lock-catalog';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { measureTransport, repoRootForBench, runLive, startLocalCluster, stopLocalCluster } from '@lockfabric/workload-driver';

const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' }, 'rss-only': { type: 'boolean' } } });
const quick = values.quick === true;
const root = repoRootForBench();
const outFile = values.out ?? join(root, 'bench-results', 'foundation.json');
const caslock = protocolById('caslock');
const log = (line: string) => process.stderr.write(line + '\n');

const figures: Record<string, unknown> = { machine: { node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString() } };

if (values['rss-only']) {
  console.log(JSON.stringify({ memoryNodeRss: { oneLock: await memoryNodeRssMb(1), tenMillionLocks: await memoryNodeRssMb(10_000_000) } }, null, 2));
  process.exit(0);
}

log('1/5 raw transport…');
const dir = join(root, '.lockfabric', `bench-${process.pid}`);
const state = await startLocalCluster({ dir, lockCount: 1_048_576, entryBytes: 8, clientsPerComputeNode: 256, withSwitch: false, withCoordinator: false });
try {
  const transport = await measureTransport(quick ? 5_000 : 20_000, state.natsUrl);
  figures['transport'] = transport;

  log('2/5 live caslock, one client, no contention…');
  const uncontended: WorkloadSpec = { clients: 1, locks: 100_000, readRatio: 0, distribution: 'uniform', operations: quick ? 2_000 : 10_000, thinkNs: 0, criticalSectionNs: 0, seed: 1 };
  const single = await runLive({ state, protocol: 'caslock', spec: uncontended, recordHistory: false });
  const opUs = single.summary.latencyUs.mean + single.summary.releaseLatencyUs.mean;
  figures['liveUncontended'] = {
    acquireUsMean: single.summary.latencyUs.mean,
    releaseUsMean: single.summary.releaseLatencyUs.mean,
    acquireUsP50: single.summary.latencyUs.p50,
    releaseUsP50: single.summary.releaseLatencyUs.p50,
    ratioToTwoGrpcRtt: opUs / (2 * transport.grpcRttUs),
    verbsPerAcquire: single.accounting.counts.acquire,
    verbsPerRelease: single.accounting.counts.release,
  };

  log('3/5 live memory-node verbs/s with many clients…');
  const many: WorkloadSpec = { ...uncontended, clients: 256, locks: 1_000_000, operations: quick ? 20_000 : 100_000 };
  const loaded = await runLive({ state, protocol: 'caslock', spec: many, recordHistory: false });
  const verbs = Object.values(loaded.verbs).reduce((a, b) => a + b, 0);
  const verbsPerSec = verbs / (loaded.summary.elapsedNs / 1e9);
  figures['liveThroughput'] = { clients: 256, verbs, verbsPerSec, opsPerSec: loaded.summary.throughput, ratioToGrpcStream: verbsPerSec / transport.grpcStreamOpsPerSec };
} finally {
  await stopLocalCluster(dir);
}

log('4/5 sim speed: 256 clients on 1M locks…');
const simSpec: WorkloadSpec = { clients: 256, locks: 1_000_000, readRatio: 0, distribution: 'uniform', operations: quick ? 50_000 : 400_000, thinkNs: 0, criticalSectionNs: 0, seed: 1 };
const sim = await runWithDefinition({ substrate: 'sim', protocol: caslock, spec: simSpec, computeNodes: 8 });
const simVerbs = Object.values(sim.verbs).reduce((a, b) => a + b, 0);
figures['simSpeed'] = { clients: 256, locks: 1_000_000, verbs: simVerbs, events: sim.simEvents, wallMs: sim.wallMs, verbsPerWallSecond: simVerbs / (sim.wallMs / 1000), eventsPerWallSecond: sim.simEvents / (sim.wallMs / 1000) };

log('5/5 sim caslock, zipf 0.99 on 1000 locks, 8 → 256 clients…');
const sweep = [];
for (const clients of [8, 16, 32, 64, 128, 256]) {
  const spec: WorkloadSpec = { clients, locks: 1_000, readRatio: 0, distribution: { zipf: 0.99 }, durationMs: quick ? 2 : 10, thinkNs: 0, criticalSectionNs: 1_000, seed: 1 };
  const run = await runWithDefinition({ substrate: 'sim', protocol: caslock, spec, computeNodes: 8 });
  const cas = run.accounting.counts.acquire['cas'] ?? 0;
  sweep.push({ clients, goodputOpsPerSec: run.summary.throughput, casPerAcquisition: run.summary.acquires ? cas / run.summary.acquires : 0, p99Us: run.summary.latencyUs.p99, checkerOk: run.verdict.ok });
}
figures['simCasZipf'] = sweep;

log('memory-node resident memory with 10 million 8-byte lock words…');
figures['memoryNodeRss'] = { oneLock: await memoryNodeRssMb(1), tenMillionLocks: await memoryNodeRssMb(10_000_000) };

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(figures, null, 2) + '\n');
console.log(JSON.stringify(figures, null, 2));
log(`written to ${outFile}`);

async function memoryNodeRssMb(lockCount: number): Promise<number> {
  const { spawn } = await import('node:child_process');
  const { freePort } = await import('@lockfabric/workload-driver');
  const { startNatsServer } = await import('@lockfabric/testkit');
  const nats = await startNatsServer();
  const [grpc, health] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(root, 'apps', 'memory-node', 'dist', 'main.js'), `--memory.lock-count=${lockCount}`, '--memory.entry-bytes=8', `--memory.grpc-port=${grpc}`, `--health.port=${health}`, `--nats.url=${nats.url}`], { stdio: 'ignore' });
  try {
    let ready = false;
    for (let i = 0; i < 300 && !ready; i++) {
      ready = await fetch(`http://127.0.0.1:${health}/readyz`).then((r) => r.ok).catch(() => false);
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!ready) throw new Error(`memory node with ${lockCount} locks did not become ready`);
    // Pages of a fresh region are not resident until touched: write every lock word once.
    const { MemoryQueuePair, silentLogger } = await import('@lockfabric/live');
    const qp = await MemoryQueuePair.connect(`127.0.0.1:${grpc}`, 99, { logger: silentLogger });
    try {
      const region = (await qp.describe()).regions.find((r) => r.region === 0);
      const chunk = 64 * 1024;
      const data = new Uint8Array(chunk).fill(0xff);
      const writes = [];
      for (let offset = 0; offset < (region?.sizeBytes ?? 0); offset += chunk) {
        writes.push({ op: 'write' as const, addr: { node: 0, region: 0, rkey: region!.rkey, offset }, data: data.subarray(0, Math.min(chunk, region!.sizeBytes - offset)) });
      }
      for (let i = 0; i < writes.length; i += 16) await qp.post(writes.slice(i, i + 16));
    } finally {
      qp.close();
    }
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 'NaN');
    return kb / 1024;
  } finally {
    child.kill('SIGKILL');
    await nats.stop();
  }
}
