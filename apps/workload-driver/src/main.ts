import { LockFabricError, errorMessage } from '@lockfabric/ports';
import { benchCommand } from './commands/bench.js';
import { certsCommand } from './commands/certs.js';
import { chaosCommand } from './commands/chaos.js';
import { checkCommand } from './commands/check.js';
import { clusterCommand } from './commands/cluster.js';
import { demoCommand } from './commands/demo.js';
import { locksCommand } from './commands/locks.js';
import { nemesisCommand } from './commands/nemesis.js';
import { reportCommand } from './commands/report.js';
import { reproduceCommand } from './commands/reproduce.js';
import { switchCommand } from './commands/switch.js';
import { sweepCommand } from './sweep/command.js';
import { transportCommand } from './commands/transport.js';
import { configureProcessTls, loadTlsMaterial } from '@lockfabric/live';
import { cliTlsFromEnv } from './cluster/cluster-tls.js';

const USAGE = `lockfabric — run, compare and operate distributed lock managers on an emulated RDMA fabric

usage: lockfabric <command> [flags]   (lockfabric <command> --help for its flags)

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

const commands: Record<string, (argv: readonly string[]) => Promise<number>> = {
  demo: demoCommand,
  bench: benchCommand,
  check: checkCommand,
  sweep: sweepCommand,
  transport: transportCommand,
  cluster: clusterCommand,
  chaos: chaosCommand,
  nemesis: nemesisCommand,
  locks: locksCommand,
  switch: switchCommand,
  report: reportCommand,
  reproduce: reproduceCommand,
  certs: certsCommand,
};

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`lockfabric: unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
    return 2;
  }
  // Certificates named in the environment apply to every command (remote clusters, --coordinator-at);
  // otherwise a command that reads a local cluster's state picks that cluster's operator certificate.
  const files = cliTlsFromEnv();
  if (files) configureProcessTls(loadTlsMaterial(files));
  return command(rest);
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
