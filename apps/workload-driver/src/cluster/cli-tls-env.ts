import type { TlsFiles } from '@lockfabric/live';
import { ConfigError } from '@lockfabric/ports';

// Apart from cluster-tls.ts so that reading the environment does not load gRPC and NATS.

/** Environment that points the CLI at certificates of its own (a remote cluster, another role). */
export const CLI_TLS_ENV = { ca: 'LOCKFABRIC_TLS_CA', cert: 'LOCKFABRIC_TLS_CERT', key: 'LOCKFABRIC_TLS_KEY' } as const;

/** The certificates named by LOCKFABRIC_TLS_CA/CERT/KEY, when all three are set; a partial set is an error. */
export function cliTlsFromEnv(env: NodeJS.ProcessEnv = process.env): TlsFiles | undefined {
  const ca = env[CLI_TLS_ENV.ca];
  const cert = env[CLI_TLS_ENV.cert];
  const key = env[CLI_TLS_ENV.key];
  if (!ca && !cert && !key) return undefined;
  if (!ca || !cert || !key) throw new ConfigError([`set all of ${Object.values(CLI_TLS_ENV).join(', ')} or none of them`]);
  return { ca, cert, key };
}
