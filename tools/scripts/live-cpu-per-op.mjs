#!/usr/bin/env node
// Processor time per operation of every process of a live run: each service of a running local
// cluster (utime+stime from /proc/<pid>/stat before and after, pids from the cluster's state file)
// and the CLI that runs the bench (this script's waited-for children: cutime+cstime of
// /proc/self/stat). Also the memory nodes' verbs per doorbell over the run (their /metrics).
// A report, not a test: nothing is asserted. Processor time per operation moves far less with the
// machine's other load than goodput does; compare builds by it (docs/performance-live.md).
// Usage: node tools/scripts/live-cpu-per-op.mjs [--cluster-dir D] [--driver PATH] [--label L] -- BENCH-FLAGS...
//   e.g. npx lockfabric cluster up --compute-nodes 2 --dir /tmp/c && node tools/scripts/live-cpu-per-op.mjs \
//        --cluster-dir /tmp/c -- -p caslock --clients 64 --locks 1000 --distribution uniform --duration-ms 10000
// `bench --substrate live --json --floor-ops 0 --warmup-ops 0 --cluster-dir D` is added to the flags.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const split = args.indexOf('--');
const own = split < 0 ? args : args.slice(0, split);
const benchFlags = split < 0 ? [] : args.slice(split + 1);
const option = (name, fallback) => {
  const i = own.indexOf(name);
  return i >= 0 && own[i + 1] !== undefined ? own[i + 1] : fallback;
};
const clusterDir = resolve(option('--cluster-dir', join('.lockfabric', 'cluster')));
const driver = resolve(option('--driver', 'apps/workload-driver/dist/main.js'));
const label = option('--label', '');

/** Clock ticks per second of /proc's times: 100 on Linux everywhere we run. */
const TICKS_PER_S = 100;

/** utime + stime (fields 14, 15) or cutime + cstime (16, 17) of /proc/<pid>/stat, in µs. */
function cpuUs(pid, children = false) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [user, system] = children ? [fields[13], fields[14]] : [fields[11], fields[12]];
  return ((Number(user) + Number(system)) * 1e6) / TICKS_PER_S;
}

function services() {
  const state = JSON.parse(readFileSync(join(clusterDir, 'cluster.json'), 'utf8'));
  return state.processes.filter((p) => p.role !== 'redis');
}

function sample(processes) {
  const out = new Map();
  for (const p of processes) {
    try {
      out.set(p.name, cpuUs(p.pid));
    } catch {
      out.set(p.name, Number.NaN); // gone
    }
  }
  return out;
}

function httpText(url) {
  return new Promise((done, fail) => {
    get(url, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => done(body));
    }).on('error', fail);
  });
}

/** Sum of a Prometheus counter's series on one health port (0 when absent or unreachable). */
async function counter(port, name) {
  try {
    const text = await httpText(`http://127.0.0.1:${port}/metrics`);
    let sum = 0;
    for (const line of text.split('\n')) if (line.startsWith(name) && (line[name.length] === ' ' || line[name.length] === '{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    return sum;
  } catch {
    return 0;
  }
}

async function doorbellCounts(processes) {
  let verbs = 0;
  let doorbells = 0;
  for (const p of processes.filter((q) => q.role === 'memory' && q.health !== undefined)) {
    verbs += await counter(p.health, 'lockfabric_nic_verbs_total');
    doorbells += await counter(p.health, 'lockfabric_nic_doorbells_total');
  }
  return { verbs, doorbells };
}

function runBench() {
  const argv = [driver, 'bench', '--substrate', 'live', '--json', '--floor-ops', '0', '--warmup-ops', '0', '--cluster-dir', clusterDir, ...benchFlags];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      try {
        done({ code, result: JSON.parse(out) });
      } catch {
        fail(new Error(`bench exited ${code} without a JSON result: ${out.slice(0, 500)}`));
      }
    });
  });
}

const processes = services();
const loadBefore = loadavg()[0];
// Metrics are collected on scrape: scrape once first so the counters are current before the run.
await doorbellCounts(processes);
const countsBefore = await doorbellCounts(processes);
const before = sample(processes);
const cliBefore = cpuUs('self', true);
const { code, result } = await runBench();
const cliAfter = cpuUs('self', true);
const after = sample(processes);
const countsAfter = await doorbellCounts(processes);
const loadAfter = loadavg()[0];

// An operation is one successful acquire and its release, as in `throughput`.
const operations = result.acquires;
const rows = processes.map((p) => ({ name: p.name, cpuMs: (after.get(p.name) - before.get(p.name)) / 1e3 }));
rows.push({ name: 'cli', cpuMs: (cliAfter - cliBefore) / 1e3 });
const total = rows.reduce((sum, r) => sum + r.cpuMs, 0);
const verbs = countsAfter.verbs - countsBefore.verbs;
const doorbells = countsAfter.doorbells - countsBefore.doorbells;

console.log(`${label ? `${label}: ` : ''}exit ${code}, ${operations} operations, goodput ${Math.round(result.throughput)} ops/s, load ${loadBefore.toFixed(2)}/${loadAfter.toFixed(2)}`);
console.log(`verbs per acquire ${result.verbsPerAcquire?.total?.toFixed(3)}, per release ${result.verbsPerRelease?.total?.toFixed(3)}; memory nodes: ${verbs} verbs in ${doorbells} doorbells (${(verbs / Math.max(1, doorbells)).toFixed(2)} per doorbell)`);
console.log('process          cpu ms   µs/op');
for (const r of [...rows, { name: 'total', cpuMs: total }]) console.log(`${r.name.padEnd(14)} ${r.cpuMs.toFixed(0).padStart(8)} ${((r.cpuMs * 1e3) / operations).toFixed(2).padStart(7)}`);
console.log(JSON.stringify({ label, operations, throughput: result.throughput, load: [loadBefore, loadAfter], verbsPerDoorbell: verbs / Math.max(1, doorbells), perOpUs: Object.fromEntries([...rows, { name: 'total', cpuMs: total }].map((r) => [r.name, (r.cpuMs * 1e3) / operations])) }));
