import { join } from 'node:path';
import { configureProcessTls, consoleLogger, loadTlsMaterial } from '@lockfabric/live';
import type { ServiceRole, TlsFiles } from '@lockfabric/live';
import { ConfigError } from '@lockfabric/ports';
import { createClusterCa, issueCertificate, operatorFiles, type ClusterCa } from './certificates.js';

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

/**
 * Chooses the certificate this CLI process presents: LOCKFABRIC_TLS_* when set, else the
 * operator certificate of the cluster in `clusterDir`, else none (an insecure cluster).
 */
export function useClusterTls(clusterDir: string, mode: 'mtls' | 'insecure' | undefined): void {
  const files = cliTlsFromEnv() ?? (mode === 'insecure' ? undefined : operatorFiles(clusterDir));
  configureProcessTls(files ? loadTlsMaterial(files) : undefined);
}

/** What a service of a local cluster is started with, per process name. */
export interface LocalTls {
  readonly dir: string;
  /** The run's CA (it also signs the NATS server's certificate). */
  readonly ca: ClusterCa;
  /** Flags for the service `name` with `identity`; its certificate is issued on first use. */
  flagsFor(name: string, role: ServiceRole, node: string): string[];
}

/** A new CA in <clusterDir>/tls with the operator's certificate, or nothing with `insecure`. */
export function prepareLocalTls(clusterDir: string, cluster: string, insecure: boolean): LocalTls | undefined {
  if (insecure) {
    consoleLogger.warn(`cluster ${cluster}: TLS IS OFF (--insecure): gRPC is plaintext and any local process may call any method`);
    return undefined;
  }
  const dir = join(clusterDir, 'tls');
  const ca = createClusterCa(dir, cluster);
  issueCertificate(ca, 'operator', { role: 'operator', node: 'cli' });
  return {
    dir,
    ca,
    flagsFor: (name, role, node) => {
      const files = issueCertificate(ca, name, { role, node });
      return [`--tls.ca=${files.ca}`, `--tls.cert=${files.cert}`, `--tls.key=${files.key}`];
    },
  };
}
