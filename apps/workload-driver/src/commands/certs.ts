import { mkdirSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_ROLES } from '@lockfabric/live';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { createClusterCa, issueCertificate, issueNatsServerCertificate, NATS_SERVER_HOSTS } from '../cluster/certificates.js';
import { NATS_ROLES, roleNatsCredentials, type ComputePods } from '../cluster/nats-role-auth.js';

export const CERTS_HELP = `lockfabric certs create — a CA and one certificate per role, for compose or Kubernetes

  Writes DIR/ca.crt, DIR/ca.key and, per role, DIR/<role>/{ca.crt,tls.crt,tls.key} (the names a
  kubernetes.io/tls Secret and cert-manager use). Roles: ${SERVICE_ROLES.join(', ')}.
  Each certificate names spiffe://lockfabric/<role>/<--node>. Keep ca.key out of the cluster.
  NATS: DIR/nats/<role>/{nkey.seed,ca.crt} (an NKey per role: ${NATS_ROLES.join(', ')}),
  DIR/nats/server/{tls.crt,tls.key,ca.crt} (the NATS server's certificate, for
  ${NATS_SERVER_HOSTS.slice(0, 2).join(', ')} and their namespace names) and DIR/nats/nats.conf, a
  nats-server config requiring TLS (certificate read from /etc/nats-tls) and granting each role
  only its subjects.

  With --compute-nodes N, compute pods get a key each instead of the role key:
  DIR/nats/compute-node/compute-node-<i>.seed for pods 0..N-1 (node id = --compute-id-base + i),
  each allowed only its own node's heartbeat, packets, mailbox and queue subjects; the
  compute-node StatefulSet reads the one named after its pod.

  --dir DIR             where to write (required)
  --cluster NAME        CA name (default local)
  --node NAME           the node part of every identity (default any)
  --compute-nodes N     one NKey per compute pod (Kubernetes; N >= the StatefulSet's replicas)
  --compute-id-base B   node id of pod compute-node-0 (default 1, as LF_NODE_ID_BASE)`;

/** Where the nats container finds its certificate (compose volume, Kubernetes Secret nats-tls). */
const NATS_TLS_MOUNT = '/etc/nats-tls';

export async function certsCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('certs', argv, {
    dir: { type: 'string' },
    cluster: { type: 'string' },
    node: { type: 'string' },
    'compute-nodes': { type: 'string' },
    'compute-id-base': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  const action = (values['_'] as string[])[0];
  if (values['help'] || action !== 'create') return (console.log(CERTS_HELP), values['help'] ? 0 : 2);
  const reader = new FlagReader(values);
  const dir = reader.string('dir', '');
  if (!dir) reader.problems.push('--dir: required');
  const cluster = reader.string('cluster', 'local');
  const node = reader.string('node', 'any');
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(node)) reader.problems.push(`--node: expected 1-64 letters, digits, '.', '-' or '_', got ${JSON.stringify(node)}`);
  const podCount = reader.optionalNumber('compute-nodes', { integer: true, min: 1 });
  const idBase = reader.number('compute-id-base', 1, { integer: true, min: 0 });
  reader.done();
  const computePods: ComputePods | undefined = podCount === undefined ? undefined : { count: podCount, idBase };
  const ca = createClusterCa(dir, cluster);
  for (const role of SERVICE_ROLES) {
    const files = issueCertificate(ca, role, { role, node });
    const into = join(dir, role);
    mkdirSync(into, { recursive: true, mode: 0o700 });
    copyFileSync(files.ca, join(into, 'ca.crt'));
    copyFileSync(files.cert, join(into, 'tls.crt'));
    copyFileSync(files.key, join(into, 'tls.key'));
  }
  const server = issueNatsServerCertificate(ca, 'nats-server');
  const serverDir = join(dir, 'nats', 'server');
  mkdirSync(serverDir, { recursive: true, mode: 0o700 });
  copyFileSync(server.ca, join(serverDir, 'ca.crt'));
  copyFileSync(server.cert, join(serverDir, 'tls.crt'));
  copyFileSync(server.key, join(serverDir, 'tls.key'));
  // Where compose and Kubernetes mount the server's Secret in the nats container.
  const nats = roleNatsCredentials({ ca: `${NATS_TLS_MOUNT}/ca.crt`, cert: `${NATS_TLS_MOUNT}/tls.crt`, key: `${NATS_TLS_MOUNT}/tls.key` }, computePods);
  for (const role of NATS_ROLES) {
    const into = join(dir, 'nats', role);
    mkdirSync(into, { recursive: true, mode: 0o700 });
    const seed = nats.seeds[role];
    if (seed !== undefined) writeFileSync(join(into, 'nkey.seed'), seed + '\n', { mode: 0o600 });
    if (role === 'compute-node') for (const [file, podSeed] of Object.entries(nats.podSeeds)) writeFileSync(join(into, file), podSeed + '\n', { mode: 0o600 });
    copyFileSync(server.ca, join(into, 'ca.crt'));
  }
  writeFileSync(join(dir, 'nats', 'nats.conf'), nats.serverConfig, { mode: 0o600 });
  console.log(`wrote a CA and certificates for ${SERVICE_ROLES.join(', ')} to ${dir}`);
  console.log(`wrote NATS NKeys for ${NATS_ROLES.join(', ')}, the server certificate and its config (TLS required) to ${join(dir, 'nats')}`);
  if (computePods) console.log(`compute pods: one NKey each, compute-node-0..${computePods.count - 1} (nodes ${computePods.idBase}..${computePods.idBase + computePods.count - 1})`);
  return 0;
}
