import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, errorMessage } from '@lockfabric/ports';
import { parseRoute } from './cut-relay.js';
import type { RelayRoute } from './cut-relay.js';
import type { NatsTlsTermination } from './nats-tls-termination.js';

/** What the cut proxy process is told on its command line (`lockfabric cluster up` writes it). */
export interface CutProxyFlags {
  readonly dir: string;
  readonly controlPort: number;
  readonly routes: readonly RelayRoute[];
  readonly natsTls?: NatsTlsTermination;
}

/**
 * The cut proxy's flags, or a ConfigError listing every problem at once (the process exits 2 with
 * it), as the services report their configuration.
 */
export function readCutProxyFlags(argv: readonly string[], readFile: (path: string) => Buffer = readFileSync): CutProxyFlags {
  const problems: string[] = [];
  let values: Record<string, string | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        dir: { type: 'string' },
        'control-port': { type: 'string' },
        route: { type: 'string', multiple: true },
        // NATS over TLS: the certificate the proxy shows clients and the CA nats-server's must chain to.
        'nats-tls-cert': { type: 'string' },
        'nats-tls-key': { type: 'string' },
        'nats-tls-ca': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new ConfigError([errorMessage(error)]);
  }
  const dir = values['dir'] as string | undefined;
  const port = values['control-port'] as string | undefined;
  if (!dir) problems.push('--dir (the cluster directory) is required');
  if (!port || !/^\d{1,5}$/.test(port)) problems.push('--control-port: expected a port number');
  const routes: RelayRoute[] = [];
  for (const text of (values['route'] as string[] | undefined) ?? []) {
    try {
      routes.push(parseRoute(text));
    } catch (error) {
      problems.push(errorMessage(error));
    }
  }
  const [cert, key, ca] = [values['nats-tls-cert'], values['nats-tls-key'], values['nats-tls-ca']] as (string | undefined)[];
  const given = [cert, key, ca].filter((f) => f !== undefined).length;
  if (given > 0 && given < 3) problems.push('--nats-tls-cert, --nats-tls-key and --nats-tls-ca go together');
  let natsTls: NatsTlsTermination | undefined;
  if (problems.length === 0 && cert && key && ca) {
    try {
      natsTls = { cert: readFile(cert), key: readFile(key), ca: readFile(ca) };
    } catch (error) {
      problems.push(`--nats-tls-*: ${errorMessage(error)}`);
    }
  }
  if (problems.length > 0 || !dir) throw new ConfigError(problems);
  return { dir, controlPort: Number(port), routes, ...(natsTls ? { natsTls } : {}) };
}
