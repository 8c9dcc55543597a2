import { join } from 'node:path';
import { configureProcessTls, consoleLogger, loadTlsMaterial } from '@lockfabric/live';
import type { ServiceRole } from '@lockfabric/live';
import { createClusterCa, issueCertificate, operatorFiles, type ClusterCa } from './certificates.js';

export { CLI_TLS_ENV, cliTlsFromEnv } from './cli-tls-env.js';
import { cliTlsFromEnv } from './cli-tls-env.js';

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
