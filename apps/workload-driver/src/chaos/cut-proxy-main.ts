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
import { ConfigError, errorMessage } from '@lockfabric/ports';

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
  // Every problem with the flags is reported at once (exit 2), as the services report their config.
  const problems: string[] = [];
  if (!values.dir) problems.push('--dir (the cluster directory) is required');
  if (!values['control-port'] || !/^\d{1,5}$/.test(values['control-port'])) problems.push('--control-port: expected a port number');
  const routes: RelayRoute[] = [];
  for (const text of values.route ?? []) {
    try {
      routes.push(parseRoute(text));
    } catch (error) {
      problems.push(errorMessage(error));
    }
  }
  const tlsFiles = [values['nats-tls-cert'], values['nats-tls-key'], values['nats-tls-ca']];
  if (tlsFiles.some((f) => f !== undefined) && !tlsFiles.every((f) => f !== undefined)) problems.push('--nats-tls-cert, --nats-tls-key and --nats-tls-ca go together');
  let natsTls: NatsTlsTermination | undefined;
  const [cert, key, ca] = tlsFiles;
  if (problems.length === 0 && cert && key && ca) {
    try {
      natsTls = { cert: readFileSync(cert), key: readFileSync(key), ca: readFileSync(ca) };
    } catch (error) {
      problems.push(`--nats-tls-*: ${errorMessage(error)}`);
    }
  }
  if (problems.length > 0 || !values.dir) {
    console.error(`lockfabric cut-proxy: ${new ConfigError(problems).message}`);
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
