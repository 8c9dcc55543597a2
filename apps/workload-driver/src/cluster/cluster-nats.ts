import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configureProcessNats, consoleLogger, createSubjects, readNatsCa, readNkeySeed } from '@lockfabric/live';
import { issueNatsServerCertificate, type ClusterCa } from './certificates.js';
import { createIdentities, natsAuthorizationConfig, type ServiceSpec } from './nats-auth.js';
import { natsServerTlsBlock } from './nats-tls.js';
import { ClusterStateError } from './errors.js';

/** Environment that points the CLI at a NATS identity of its own (a remote cluster). */
export const CLI_NATS_SEED_ENV = 'LOCKFABRIC_NATS_SEED_FILE';

/** Environment that points the CLI at the CA of a remote cluster's NATS server (then it connects over TLS). */
export const CLI_NATS_CA_ENV = 'LOCKFABRIC_NATS_CA_FILE';

/** The service (process) names a local cluster runs, with the NATS identity each gets. */
export interface NatsAuthPlan {
  readonly cluster: string;
  readonly services: readonly (ServiceSpec & { readonly name: string })[];
}

/** What `cluster up` starts nats-server and the services with. */
export interface LocalNatsAuth {
  /** nats-server config file holding the users and their permissions (public keys only). */
  readonly serverConfig: string;
  /** `--nats.seed-file=…` (and `--nats.ca-file=…` with TLS) for the service `name`. */
  flagsFor(name: string): string[];
}

/** <clusterDir>/nats: one seed file per identity (mode 0600) and the server config. */
export function natsDir(clusterDir: string): string {
  return join(clusterDir, 'nats');
}

/** The seed file of the operator (this CLI) in a cluster directory. */
export function operatorSeedFile(clusterDir: string): string {
  return join(natsDir(clusterDir), 'operator.seed');
}

/** The CA its clients verify the NATS server with; present only when that cluster's NATS is TLS. */
export function natsCaFile(clusterDir: string): string {
  return join(natsDir(clusterDir), 'ca.crt');
}

/**
 * A fresh NKey per service and one for the operator, and the nats-server config granting each only
 * its subjects; with the cluster's `ca`, a server certificate and a `tls {}`
 * block, so every connection is TLS verified against that CA. Nothing with `insecure`.
 */
export function prepareLocalNatsAuth(clusterDir: string, plan: NatsAuthPlan, insecure: boolean, ca?: ClusterCa): LocalNatsAuth | undefined {
  if (insecure) {
    consoleLogger.warn(`cluster ${plan.cluster}: NATS AUTHENTICATION AND TLS ARE OFF (--insecure): any local process may read, publish or subscribe to any subject`);
    return undefined;
  }
  const dir = natsDir(clusterDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const specs: ServiceSpec[] = [...plan.services.map(({ role, id, rack, switchRacks }) => ({ role, id, ...(rack === undefined ? {} : { rack }), ...(switchRacks === undefined ? {} : { switchRacks }) })), { role: 'driver', id: 'operator' }];
  const identities = createIdentities(specs);
  const names = [...plan.services.map((s) => s.name), 'operator'];
  const seedFiles = new Map<string, string>();
  identities.forEach((identity, i) => {
    const file = join(dir, `${names[i]}.seed`);
    writeFileSync(file, identity.seed + '\n', { mode: 0o600 });
    chmodSync(file, 0o600);
    seedFiles.set(names[i] as string, file);
  });
  let tlsBlock = '';
  if (ca) {
    const server = issueNatsServerCertificate(ca, 'nats-server');
    copyFileSync(server.ca, natsCaFile(clusterDir));
    tlsBlock = natsServerTlsBlock(server);
  }
  const serverConfig = join(dir, 'nats-server.conf');
  writeFileSync(serverConfig, tlsBlock + natsAuthorizationConfig(createSubjects(plan.cluster), specs, identities), { mode: 0o600 });
  return {
    serverConfig,
    flagsFor: (name) => {
      const file = seedFiles.get(name);
      if (file === undefined) throw new ClusterStateError(`no NATS identity was made for ${name}`);
      return [`--nats.seed-file=${file}`, ...(ca ? [`--nats.ca-file=${natsCaFile(clusterDir)}`] : [])];
    },
  };
}

/**
 * Chooses the NATS identity this CLI process presents: LOCKFABRIC_NATS_SEED_FILE when set, else
 * the operator seed of the cluster in `clusterDir` when it has one, else none; and likewise the CA
 * (LOCKFABRIC_NATS_CA_FILE, else the cluster's nats/ca.crt) that makes its connections TLS.
 */
export function useClusterNats(clusterDir: string, mode: 'mtls' | 'insecure' | undefined, env: NodeJS.ProcessEnv = process.env): void {
  const pick = (fromEnv: string | undefined, local: string) => fromEnv || (mode !== 'insecure' && existsSync(local) ? local : undefined);
  const seedFile = pick(env[CLI_NATS_SEED_ENV], operatorSeedFile(clusterDir));
  const caFile = pick(env[CLI_NATS_CA_ENV], natsCaFile(clusterDir));
  configureProcessNats(seedFile === undefined ? undefined : readNkeySeed(seedFile), caFile === undefined ? undefined : readNatsCa(caFile));
}
