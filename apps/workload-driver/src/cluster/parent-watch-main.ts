// The parent watch of a temporary cluster (demo, live bench without a running cluster): a
// detached process whose stdin is a pipe from the CLI that started the cluster. The kernel closes
// the pipe when the CLI exits, however it exits (SIGKILL included), and then this process stops
// every process DIR/cluster.json lists, nats-server and redis-server included, which cannot watch.
// A cluster the CLI stopped itself has no cluster.json left: nothing to do.
import { stopLocalCluster } from './local-cluster.js';

const dir = process.argv[2];
if (!dir) {
  console.error('lockfabric parent-watch: usage: parent-watch-main.js DIR');
  process.exit(2);
}

let stopping = false;
async function stopCluster(why: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  const stopped = await stopLocalCluster(dir!, 3_000).catch((error: unknown) => console.error(`${new Date().toISOString()} [parent-watch] could not stop the cluster in ${dir}: ${String(error)}`));
  if (stopped) console.log(`${new Date().toISOString()} [parent-watch] ${why}: stopped ${stopped.processes.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}`);
  process.exit(0);
}

process.stdin.on('data', () => undefined);
process.stdin.on('end', () => void stopCluster('the CLI that started the cluster has exited'));
process.stdin.on('error', () => void stopCluster('the pipe from the CLI broke'));
