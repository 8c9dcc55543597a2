import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configureProcessNats, consoleLogger, createSubjects, readNkeySeed } from '@lockfabric/live';
import { createIdentities, natsAuthorizationConfig, type ServiceSpec } from './nats-auth.js';

/** Environment that points the CLI at a NATS identity of its own (a remote cluster). */
export const CLI_NATS_SEED_ENV = 'LOCKFABRIC_NATS_SEED_FILE';

/** The service (process) names a local cluster runs, with the NATS identity each gets. */
export interface NatsAuthPlan {
  readonly cluster: string;
  readonly services: readonly (ServiceSpec & { readonly name: string })[];
}

/** What `cluster up` starts nats-server and the services with. */
export interface LocalNatsAuth {
  /** nats-server config file holding the users and their permissions (public keys only). */
  readonly serverConfig: string;
  /** `--nats.seed-file=…` for the service `name`. */
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

/**
 * A fresh NKey per service and one for the operator, and the nats-server config granting each only
 * its subjects (issue 19 item 2); nothing with `insecure`.
 */
export function prepareLocalNatsAuth(clusterDir: string, plan: NatsAuthPlan, insecure: boolean): LocalNatsAuth | undefined {
  if (insecure) {
    consoleLogger.warn(`cluster ${plan.cluster}: NATS AUTHENTICATION IS OFF (--insecure): any local process may publish or subscribe to any subject`);
    return undefined;
  }
  const dir = natsDir(clusterDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const specs: ServiceSpec[] = [...plan.services.map(({ role, id, rack }) => ({ role, id, ...(rack === undefined ? {} : { rack }) })), { role: 'driver', id: 'operator' }];
  const identities = createIdentities(specs);
  const names = [...plan.services.map((s) => s.name), 'operator'];
  const seedFiles = new Map<string, string>();
  identities.forEach((identity, i) => {
    const file = join(dir, `${names[i]}.seed`);
    writeFileSync(file, identity.seed + '\n', { mode: 0o600 });
    chmodSync(file, 0o600);
    seedFiles.set(names[i] as string, file);
  });
  const serverConfig = join(dir, 'nats-server.conf');
  writeFileSync(serverConfig, natsAuthorizationConfig(createSubjects(plan.cluster), specs, identities), { mode: 0o600 });
  return {
    serverConfig,
    flagsFor: (name) => {
      const file = seedFiles.get(name);
      if (file === undefined) throw new Error(`no NATS identity was made for ${name}`);
      return [`--nats.seed-file=${file}`];
    },
  };
}

/**
 * Chooses the NATS identity this CLI process presents: LOCKFABRIC_NATS_SEED_FILE when set, else
 * the operator seed of the cluster in `clusterDir` when it has one, else none.
 */
export function useClusterNats(clusterDir: string, mode: 'mtls' | 'insecure' | undefined, env: NodeJS.ProcessEnv = process.env): void {
  const fromEnv = env[CLI_NATS_SEED_ENV];
  const local = operatorSeedFile(clusterDir);
  const file = fromEnv || (mode !== 'insecure' && existsSync(local) ? local : undefined);
  configureProcessNats(file === undefined ? undefined : readNkeySeed(file));
}
