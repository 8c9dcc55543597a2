import { mkdirSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_ROLES } from '@lockfabric/live';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { createClusterCa, issueCertificate, issueNatsServerCertificate, NATS_SERVER_HOSTS } from '../cluster/certificates.js';
import { NATS_ROLES, roleNatsCredentials, STATEFUL_SET_OF, type PodKeys, type StatefulSetPods } from '../cluster/nats-role-auth.js';

export const CERTS_HELP = `lockfabric certs create — a CA and one certificate per role, for compose or Kubernetes

  Writes DIR/ca.crt, DIR/ca.key and, per role, DIR/<role>/{ca.crt,tls.crt,tls.key} (the names a
  kubernetes.io/tls Secret and cert-manager use). Roles: ${SERVICE_ROLES.join(', ')}.
  Each certificate names spiffe://lockfabric/<role>/<--node>. Keep ca.key out of the cluster.
  NATS: DIR/nats/<role>/{nkey.seed,ca.crt} (an NKey per role: ${NATS_ROLES.join(', ')}),
  DIR/nats/server/{tls.crt,tls.key,ca.crt} (the NATS server's certificate, for
  ${NATS_SERVER_HOSTS.slice(0, 2).join(', ')} and their namespace names) and DIR/nats/nats.conf, a
  nats-server config requiring TLS (certificate read from /etc/nats-tls) and granting each role
  only its subjects.

  Kubernetes gives every pod its own NKey instead of the role key: --compute-nodes, --memory-nodes
  and --switches N write DIR/nats/<role>/<set>-<i>.seed for pods 0..N-1 of StatefulSet <set>
  (compute-node, memory-node, switch-dataplane; node id = that set's id base + i), each allowed
  only its own node's subjects; a pod reads the seed named after itself. Switch pod i serves
  rack i and reads only rack i's switch input; a compute pod may send only into its own rack's
  switch (--compute-racks) unless --compute-switch-racks lists more.

  --dir DIR             where to write (required)
  --cluster NAME        CA name (default local)
  --node NAME           the node part of every identity (default any)
  --compute-nodes N     one NKey per compute pod (N >= the StatefulSet's replicas)
  --compute-id-base B   node id of pod compute-node-0 (default 1, as its LF_NODE_ID_BASE)
  --compute-racks LIST  rack of each compute pod, comma-separated (one value: all; default 0)
  --compute-switch-racks own|all|LIST
                        racks whose switch input every compute pod may publish besides its own
                        (own: none more, the default; all: every rack of --switches)
  --memory-nodes N      one NKey per memory pod    --memory-id-base B  (default 0)
  --switches N          one NKey per switch pod    --switch-id-base B  (default 3)`;

/** Where the nats container finds its certificate (compose volume, Kubernetes Secret nats-tls). */
const NATS_TLS_MOUNT = '/etc/nats-tls';

export async function certsCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('certs', argv, {
    dir: { type: 'string' },
    cluster: { type: 'string' },
    node: { type: 'string' },
    'compute-nodes': { type: 'string' },
    'compute-id-base': { type: 'string' },
    'compute-racks': { type: 'string' },
    'compute-switch-racks': { type: 'string' },
    'memory-nodes': { type: 'string' },
    'memory-id-base': { type: 'string' },
    switches: { type: 'string' },
    'switch-id-base': { type: 'string' },
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
  const pods = readPodKeys(reader, values);
  reader.done();
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
  const nats = roleNatsCredentials({ ca: `${NATS_TLS_MOUNT}/ca.crt`, cert: `${NATS_TLS_MOUNT}/tls.crt`, key: `${NATS_TLS_MOUNT}/tls.key` }, pods);
  for (const role of NATS_ROLES) {
    const into = join(dir, 'nats', role);
    mkdirSync(into, { recursive: true, mode: 0o700 });
    const seed = nats.seeds[role];
    if (seed !== undefined) writeFileSync(join(into, 'nkey.seed'), seed + '\n', { mode: 0o600 });
    for (const [file, podSeed] of Object.entries(nats.podSeeds[role] ?? {})) writeFileSync(join(into, file), podSeed + '\n', { mode: 0o600 });
    copyFileSync(server.ca, join(into, 'ca.crt'));
  }
  writeFileSync(join(dir, 'nats', 'nats.conf'), nats.serverConfig, { mode: 0o600 });
  console.log(`wrote a CA and certificates for ${SERVICE_ROLES.join(', ')} to ${dir}`);
  console.log(`wrote NATS NKeys for ${NATS_ROLES.join(', ')}, the server certificate and its config (TLS required) to ${join(dir, 'nats')}`);
  const sets: [keyof typeof STATEFUL_SET_OF, StatefulSetPods | undefined][] = [['compute-node', pods.compute], ['memory-node', pods.memory], ['switch', pods.switches]];
  for (const [role, set] of sets) {
    if (set) console.log(`${role} pods: one NKey each, ${STATEFUL_SET_OF[role]}-0..${set.count - 1} (nodes ${set.idBase}..${set.idBase + set.count - 1})`);
  }
  return 0;
}

/** Comma-separated non-negative integers; problems go to the reader. */
function intList(reader: FlagReader, flag: string, raw: string): number[] {
  const items = raw.split(',').map((t) => t.trim());
  const bad = items.filter((t) => !/^\d{1,6}$/.test(t));
  if (bad.length > 0) reader.problems.push(`--${flag}: expected comma-separated non-negative integers, got ${JSON.stringify(raw)}`);
  return bad.length > 0 ? [] : items.map(Number);
}

/** The per-pod key flags; every inconsistency is a problem (exit 2), not a default. */
function readPodKeys(reader: FlagReader, values: Record<string, unknown>): PodKeys {
  const set = (countFlag: string, baseFlag: string, base: number): StatefulSetPods | undefined => {
    const count = reader.optionalNumber(countFlag, { integer: true, min: 1 });
    const idBase = reader.number(baseFlag, base, { integer: true, min: 0 });
    if (count === undefined && values[baseFlag] !== undefined) reader.problems.push(`--${baseFlag}: needs --${countFlag}`);
    return count === undefined ? undefined : { count, idBase };
  };
  const compute = set('compute-nodes', 'compute-id-base', 1);
  const memory = set('memory-nodes', 'memory-id-base', 0);
  const switches = set('switches', 'switch-id-base', 3);
  const racksRaw = values['compute-racks'];
  const extraRaw = values['compute-switch-racks'];
  if (!compute && (racksRaw !== undefined || extraRaw !== undefined)) reader.problems.push('--compute-racks, --compute-switch-racks: need --compute-nodes');
  if (!compute) return { ...(memory ? { memory } : {}), ...(switches ? { switches } : {}) };
  const parsed = typeof racksRaw === 'string' ? intList(reader, 'compute-racks', racksRaw) : [0];
  const racks = parsed.length > 0 ? parsed : [0];
  if (racks.length !== 1 && racks.length !== compute.count) reader.problems.push(`--compute-racks: expected one rack or ${compute.count} (one per compute pod), got ${racks.length}`);
  let extra: number[] = [];
  if (extraRaw === 'all') {
    if (!switches) reader.problems.push('--compute-switch-racks all: needs --switches (the racks are 0..switches-1)');
    else extra = Array.from({ length: switches.count }, (_, r) => r);
  } else if (typeof extraRaw === 'string' && extraRaw !== 'own') extra = intList(reader, 'compute-switch-racks', extraRaw);
  if (switches) {
    const unknown = [...racks, ...extra].filter((r) => r >= switches.count);
    if (unknown.length > 0) reader.problems.push(`--compute-racks/--compute-switch-racks: rack ${unknown[0]} has no switch (--switches ${switches.count} serves racks 0..${switches.count - 1})`);
  }
  return { compute: { ...compute, racks, ...(extra.length > 0 ? { extraSwitchRacks: extra } : {}) }, ...(memory ? { memory } : {}), ...(switches ? { switches } : {}) };
}
