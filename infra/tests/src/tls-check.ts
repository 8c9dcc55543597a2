import { podSpecOf } from './kustomize.js';
import type { Doc } from './yaml-docs.js';

/** The identity role each workload's certificate Secret must carry (decision record 0007). */
export const TLS_SECRETS: Readonly<Record<string, string>> = {
  'memory-node': 'lockfabric-tls-memory-node',
  'compute-node': 'lockfabric-tls-compute-node',
  'switch-dataplane': 'lockfabric-tls-switch',
  coordinator: 'lockfabric-tls-coordinator',
  workload: 'lockfabric-tls-driver',
};

const PEM = /-----BEGIN [A-Z ]+-----/;

/**
 * Mutual TLS in the manifests: every LockFabric workload mounts its role's certificate Secret
 * read-only, not world-readable, and points the app at it; no ConfigMap holds a PEM block or turns
 * TLS off; the manifests ship no certificate Secret (it comes from the operator or cert-manager).
 */
export function tlsProblems(objects: readonly Doc[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const kind = String(o['kind']);
    const name = String((o['metadata'] as Doc)['name']);
    if (kind === 'ConfigMap') {
      for (const [key, value] of Object.entries((o['data'] ?? {}) as Record<string, string>)) {
        if (PEM.test(value)) problems.push(`ConfigMap/${name}: ${key} holds a PEM block (certificates and keys belong in Secrets)`);
        if (/"mode"\s*:\s*"insecure"/.test(value)) problems.push(`ConfigMap/${name}: ${key} sets tls.mode insecure`);
      }
    }
    if (kind === 'Secret' && Object.values(TLS_SECRETS).includes(name)) problems.push(`Secret/${name}: the manifests carry a certificate Secret; create it out of band (lockfabric certs create, cert-manager)`);
    const secretName = TLS_SECRETS[name];
    if (!secretName || kind === 'Service') continue;
    const spec = podSpecOf(o);
    if (!spec) continue;
    const volumes = (spec['volumes'] ?? []) as Doc[];
    const volume = volumes.find((v) => (v['secret'] as Doc | undefined)?.['secretName'] === secretName);
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
      const env = Object.fromEntries(((container['env'] ?? []) as Doc[]).map((e) => [String(e['name']), e['value']]));
      const dir = String(mount['mountPath']);
      const pointsAtMount = name === 'workload' ? env['LOCKFABRIC_TLS_CERT'] === `${dir}/tls.crt` && env['LOCKFABRIC_TLS_KEY'] === `${dir}/tls.key` && env['LOCKFABRIC_TLS_CA'] === `${dir}/ca.crt` : env['LOCKFABRIC_TLS_DIR'] === dir;
      if (!pointsAtMount) problems.push(`${kind}/${name}: the app is not pointed at the certificates mounted at ${dir}`);
      if (env['LOCKFABRIC_TLS_MODE'] === 'insecure') problems.push(`${kind}/${name}: LOCKFABRIC_TLS_MODE=insecure`);
    }
  }
  return problems;
}
