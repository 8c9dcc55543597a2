// The cut proxy of a local cluster: a detached process that `lockfabric cluster up` starts and
// records in DIR/cluster.json (process name `cut-proxy`). It relays the cluster's NATS and data-plane
// gRPC connections and cuts processes off on order (see cut-relay.ts, cut-control.ts).
import { readClusterState } from '../cluster/local-cluster.js';
import { startCutControl } from './cut-control.js';
import { CutRelay } from './cut-relay.js';
import { readCutProxyFlags } from './cut-proxy-flags.js';
import type { CutProxyFlags } from './cut-proxy-flags.js';
import { procAttribution } from './proc-attribution.js';
import { ConfigError, errorMessage } from '@lockfabric/ports';

async function main(): Promise<void> {
  let flags: CutProxyFlags;
  try {
    flags = readCutProxyFlags(process.argv.slice(2));
  } catch (error) {
    console.error(`lockfabric cut-proxy: ${errorMessage(error)}`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  }
  const { dir, routes, natsTls } = flags;
  // Connections are attributed to the cluster's processes as cluster.json lists them right now.
  const candidates = () => {
    try {
      return (readClusterState(dir)?.processes ?? []).filter((p) => p.role !== 'proxy').map((p) => ({ name: p.name, pid: p.pid }));
    } catch {
      return [];
    }
  };
  const relay = await CutRelay.start({ routes, attribute: procAttribution(candidates), ...(natsTls ? { natsTls } : {}) });
  const log = (line: string) => console.log(`${new Date().toISOString()} [cut-proxy] ${line}`);
  const control = await startCutControl(relay, flags.controlPort, log);
  console.log(JSON.stringify({ event: 'ready', role: 'proxy', pid: process.pid, control: control.port, ports: relay.ports, natsTls: natsTls !== undefined }));
  const stop = async (signal: string) => {
    log(`${signal}: closing`);
    await control.close();
    await relay.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

await main();
