import { podSpecOf } from './kustomize.js';
import type { Doc } from './yaml-docs.js';

/** The NATS identity Secret each LockFabric workload must mount (one NKey per role). */
export const NATS_SECRETS: Readonly<Record<string, string>> = {
  'memory-node': 'lockfabric-nats-memory-node',
  'compute-node': 'lockfabric-nats-compute-node',
  'switch-dataplane': 'lockfabric-nats-switch',
  coordinator: 'lockfabric-nats-coordinator',
};

/** Workloads whose pods each read their own seed, named after the pod (`certs create --compute-nodes/--memory-nodes/--switches N`). */
export const PER_POD_NATS_KEYS: readonly string[] = ['compute-node', 'memory-node', 'switch-dataplane'];

/** The nats-server config Secret; made from `lockfabric certs create`, never shipped. */
export const NATS_SERVER_SECRET = 'nats-config';

/** The nats-server certificate Secret (tls.crt, tls.key, ca.crt); likewise never shipped. */
export const NATS_SERVER_TLS_SECRET = 'nats-tls';

/** Where nats.conf (from `certs create`) expects the server certificate. */
export const NATS_SERVER_TLS_MOUNT = '/etc/nats-tls';
const SEED = /\bS[UAO][A-Z2-7]{50,}\b/;

/**
 * NATS credentials in the manifests: every service mounts its role's NKey Secret read-only and
 * not world-readable, and LOCKFABRIC_NATS_SEED_FILE points into that mount; no NATS URL carries a
 * password; the manifests ship neither an NKey Secret nor the server config, and no ConfigMap holds
 * a seed.
 */
export function natsProblems(objects: readonly Doc[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const kind = String(o['kind']);
    const name = String((o['metadata'] as Doc)['name']);
    if (kind === 'ConfigMap') {
      for (const [key, value] of Object.entries((o['data'] ?? {}) as Record<string, string>)) if (SEED.test(value)) problems.push(`ConfigMap/${name}: ${key} holds an NKey seed`);
    }
    if (kind === 'Secret' && (Object.values(NATS_SECRETS).includes(name) || name === NATS_SERVER_SECRET || name === NATS_SERVER_TLS_SECRET)) problems.push(`Secret/${name}: the manifests carry NATS credentials; create them out of band (lockfabric certs create)`);
    const spec = podSpecOf(o);
    if (!spec || kind === 'Service') continue;
    for (const container of (spec['containers'] ?? []) as Doc[]) {
      for (const e of (container['env'] ?? []) as Doc[]) {
        if (e['name'] === 'LOCKFABRIC_NATS_URL' && typeof e['value'] === 'string' && /\/\/[^/@]*@/.test(e['value'])) problems.push(`${kind}/${name}: LOCKFABRIC_NATS_URL carries credentials`);
      }
    }
    const secretName = NATS_SECRETS[name];
    if (!secretName) continue;
    const volume = ((spec['volumes'] ?? []) as Doc[]).find((v) => (v['secret'] as Doc | undefined)?.['secretName'] === secretName);
    if (!volume) {
      problems.push(`${kind}/${name}: no volume from Secret ${secretName}`);
      continue;
    }
    const mode = (volume['secret'] as Doc)['defaultMode'];
    if (typeof mode !== 'number' || (mode & 0o007) !== 0) problems.push(`${kind}/${name}: Secret ${secretName} files are world-readable (defaultMode ${String(mode)})`);
    for (const container of (spec['containers'] ?? []) as Doc[]) {
      const mount = ((container['volumeMounts'] ?? []) as Doc[]).find((m) => m['name'] === volume['name']);
      if (!mount) {
        problems.push(`${kind}/${name}: container ${String(container['name'])} does not mount ${secretName}`);
        continue;
      }
      if (mount['readOnly'] !== true) problems.push(`${kind}/${name}: ${secretName} is mounted writable`);
      const envList = (container['env'] ?? []) as Doc[];
      const env = Object.fromEntries(envList.map((e) => [String(e['name']), e['value']]));
      const perPod = PER_POD_NATS_KEYS.includes(name);
      const seedFile = `${String(mount['mountPath'])}/${perPod ? '$(LF_POD_NAME).seed' : 'nkey.seed'}`;
      if (env['LOCKFABRIC_NATS_SEED_FILE'] !== seedFile) problems.push(`${kind}/${name}: LOCKFABRIC_NATS_SEED_FILE does not point at the seed mounted at ${seedFile}`);
      if (perPod) {
        // Kubernetes expands $(VAR) only from variables defined earlier in the list.
        const podName = envList.findIndex((e) => e['name'] === 'LF_POD_NAME' && (((e['valueFrom'] as Doc | undefined)?.['fieldRef'] as Doc | undefined)?.['fieldPath'] === 'metadata.name'));
        const seedAt = envList.findIndex((e) => e['name'] === 'LOCKFABRIC_NATS_SEED_FILE');
        if (podName < 0 || podName > seedAt) problems.push(`${kind}/${name}: LF_POD_NAME (metadata.name) is not defined before LOCKFABRIC_NATS_SEED_FILE, so $(LF_POD_NAME) does not expand`);
      }
      if (env['LOCKFABRIC_NATS_CA_FILE'] !== `${String(mount['mountPath'])}/ca.crt`) problems.push(`${kind}/${name}: LOCKFABRIC_NATS_CA_FILE does not point at the CA mounted at ${String(mount['mountPath'])} (NATS without TLS)`);
    }
  }
  return problems;
}

/**
 * NATS over TLS in the manifests: the nats StatefulSet mounts the nats-tls Secret
 * read-only, not world-readable, where its config reads the certificate, with an fsGroup so the
 * non-root server can read a 0440 key.
 */
export function natsServerTlsProblems(objects: readonly Doc[]): string[] {
  const nats = objects.find((o) => o['kind'] === 'StatefulSet' && (o['metadata'] as Doc)['name'] === 'nats');
  const spec = nats ? podSpecOf(nats) : undefined;
  if (!spec) return ['StatefulSet/nats: missing'];
  const problems: string[] = [];
  const volume = ((spec['volumes'] ?? []) as Doc[]).find((v) => (v['secret'] as Doc | undefined)?.['secretName'] === NATS_SERVER_TLS_SECRET);
  if (!volume) return [`StatefulSet/nats: no volume from Secret ${NATS_SERVER_TLS_SECRET} (the server certificate)`];
  const mode = (volume['secret'] as Doc)['defaultMode'];
  if (typeof mode !== 'number' || (mode & 0o007) !== 0) problems.push(`StatefulSet/nats: Secret ${NATS_SERVER_TLS_SECRET} files are world-readable (defaultMode ${String(mode)})`);
  if (typeof mode === 'number' && (mode & 0o077) !== 0 && typeof (spec['securityContext'] as Doc | undefined)?.['fsGroup'] !== 'number') problems.push('StatefulSet/nats: no fsGroup, so the non-root server cannot read its group-readable key');
  for (const container of (spec['containers'] ?? []) as Doc[]) {
    const mount = ((container['volumeMounts'] ?? []) as Doc[]).find((m) => m['name'] === volume['name']);
    if (!mount) problems.push(`StatefulSet/nats: container ${String(container['name'])} does not mount ${NATS_SERVER_TLS_SECRET}`);
    else {
      if (mount['mountPath'] !== NATS_SERVER_TLS_MOUNT) problems.push(`StatefulSet/nats: ${NATS_SERVER_TLS_SECRET} mounted at ${String(mount['mountPath'])}, but nats.conf reads ${NATS_SERVER_TLS_MOUNT}`);
      if (mount['readOnly'] !== true) problems.push(`StatefulSet/nats: ${NATS_SERVER_TLS_SECRET} is mounted writable`);
    }
  }
  return problems;
}
