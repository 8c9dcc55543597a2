// The cut proxy of a local cluster: a detached process that `lockfabric cluster up` starts and
// records in DIR/cluster.json (process name `cut-proxy`). It relays the cluster's NATS and data-plane
// gRPC connections and cuts processes off on order (see cut-relay.ts, cut-control.ts).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readClusterState } from '../cluster/local-cluster.js';
import { startCutControl } from './cut-control.js';
import { CutRelay, parseRoute } from './cut-relay.js';
import type { RelayRoute } from './cut-relay.js';
import type { NatsTlsTermination } from './nats-tls-termination.js';
import { procAttribution } from './proc-attribution.js';
import { errorMessage } from '@lockfabric/ports';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      'control-port': { type: 'string' },
      route: { type: 'string', multiple: true },
      // NATS over TLS: the certificate the proxy shows clients and the CA nats-server's must chain to.
      'nats-tls-cert': { type: 'string' },
      'nats-tls-key': { type: 'string' },
      'nats-tls-ca': { type: 'string' },
    },
  });
  let routes: RelayRoute[];
  let natsTls: NatsTlsTermination | undefined;
  try {
    if (!values.dir) throw new Error('--dir (the cluster directory) is required');
    if (!values['control-port'] || !/^\d{1,5}$/.test(values['control-port'])) throw new Error('--control-port: expected a port number');
    routes = (values.route ?? []).map(parseRoute);
    const tlsFiles = [values['nats-tls-cert'], values['nats-tls-key'], values['nats-tls-ca']];
    if (tlsFiles.some((f) => f !== undefined) && !tlsFiles.every((f) => f !== undefined)) throw new Error('--nats-tls-cert, --nats-tls-key and --nats-tls-ca go together');
    const [cert, key, ca] = tlsFiles;
    if (cert && key && ca) natsTls = { cert: readFileSync(cert), key: readFileSync(key), ca: readFileSync(ca) };
  } catch (error) {
    console.error(`lockfabric cut-proxy: ${errorMessage(error)}`);
    process.exit(2);
  }
  const dir = values.dir;
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
  const control = await startCutControl(relay, Number(values['control-port']), log);
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
