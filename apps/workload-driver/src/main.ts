import { readFileSync } from 'node:fs';
import { LockFabricError, errorMessage } from '@lockfabric/ports';
import { cliTlsFromEnv } from './cluster/cli-tls-env.js';

const USAGE = `lockfabric — run, compare and operate distributed lock managers on an emulated RDMA fabric

usage: lockfabric <command> [flags]   (lockfabric <command> --help for its flags; lockfabric --version)

  demo        bring up a local cluster, run every protocol briefly, print a comparison
  bench       one protocol, one workload, on sim | embedded | live
  check       simulation testing over a range of seeds; one-line reproductions of failures
  sweep       run | merge | job: a check --swarm sweep in shards (processes or a Kubernetes Indexed Job)
  transport   raw limits of this machine: bare gRPC stream and NATS
  cluster     up | down | status of a local live cluster (separate processes)
  chaos       kill | pause | resume | restart | partition | switch-faults | nats-restart, local or Kubernetes
  nemesis     a workload under a seeded fault schedule: safety, liveness after healing, an HTML report
  locks       reset | drain: planned DSLR lock-table reset and freeze-and-drain of one lock, by the coordinator
  switch      describe: a running switch's program, lock capacity and register memory
  report      re-render a saved report.json (nemesis, bench, demo, reproduce) as HTML with plots
  reproduce   the papers' experiments on sim: our series beside the paper's, a claims table
  certs       create: a CA and per-role certificates for compose or Kubernetes (mutual TLS)`;

type Command = (argv: readonly string[]) => Promise<number>;

// Each command is loaded when it is run: `bench` on sim need not load the report renderer (Vega and
// d3) or gRPC, and `--help` loads nothing.
const commands: Record<string, () => Promise<Command>> = {
  bench: () => import('./commands/bench.js').then((m) => m.benchCommand),
  certs: () => import('./commands/certs.js').then((m) => m.certsCommand),
  chaos: () => import('./commands/chaos.js').then((m) => m.chaosCommand),
  check: () => import('./commands/check.js').then((m) => m.checkCommand),
  cluster: () => import('./commands/cluster.js').then((m) => m.clusterCommand),
  demo: () => import('./commands/demo.js').then((m) => m.demoCommand),
  locks: () => import('./commands/locks.js').then((m) => m.locksCommand),
  nemesis: () => import('./commands/nemesis.js').then((m) => m.nemesisCommand),
  report: () => import('./commands/report.js').then((m) => m.reportCommand),
  reproduce: () => import('./commands/reproduce.js').then((m) => m.reproduceCommand),
  switch: () => import('./commands/switch.js').then((m) => m.switchCommand),
  sweep: () => import('./sweep/command.js').then((m) => m.sweepCommand),
  transport: () => import('./commands/transport.js').then((m) => m.transportCommand),
};

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === 'version') {
    console.log(`lockfabric ${version()}`);
    return 0;
  }
  // `bench --help` needs only its text, not bench.ts's flag readers and workloads.
  const load = name === 'bench' && (rest.includes('--help') || rest.includes('-h')) ? () => import('./commands/bench-help.js').then((m) => m.benchHelpCommand) : commands[name];
  if (!load) {
    console.error(`lockfabric: unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
    return 2;
  }
  // Certificates named in the environment apply to every command (remote clusters, --coordinator-at);
  // otherwise a command that reads a local cluster's state picks that cluster's operator certificate.
  const files = cliTlsFromEnv();
  if (files) {
    const { configureProcessTls, loadTlsMaterial } = await import('@lockfabric/live');
    configureProcessTls(loadTlsMaterial(files));
  }
  return (await load())(rest);
}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof LockFabricError && error.code === 'CONFIG') {
    console.error(error.message);
    process.exitCode = 2;
  } else {
    console.error(`lockfabric: ${errorMessage(error)}`);
    process.exitCode = 4;
  }
}
