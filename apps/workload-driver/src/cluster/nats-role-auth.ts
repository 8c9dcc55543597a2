import type { TlsFiles } from '@lockfabric/live';
import { natsServerTlsBlock } from './nats-tls.js';
import { createUser } from '@nats-io/nkeys';
import type { Permissions } from './nats-auth.js';

/**
 * NATS identities per role, for compose and Kubernetes, where every pod of a StatefulSet mounts
 * the same Secret: one NKey per role, not per node. Permissions are therefore per role: a compute
 * pod cannot publish membership, recovery orders or switch egress, but it could publish another
 * compute node's heartbeat (per-pod keys, `certs create --compute-nodes N`, close that). Subjects match any
 * cluster name (`lf.*.…`), so one server config serves the dev and bench overlays.
 */
export const NATS_ROLES = ['memory-node', 'compute-node', 'switch', 'coordinator', 'driver'] as const;
export type NatsRoleName = (typeof NATS_ROLES)[number];

const P = 'lf.*';
const INBOX = '_INBOX.>';

export function rolePermissions(role: NatsRoleName): Permissions {
  const everything = { publish: ['lf.>', INBOX], subscribe: ['lf.>', INBOX], allowResponses: true };
  switch (role) {
    case 'coordinator':
    case 'driver':
      return everything;
    case 'compute-node':
      return {
        publish: [`${P}.hb.compute.*`, `${P}.sw.*.in`, `${P}.node.*.msg.*`, `${P}.ctl.fiss.stuck`],
        subscribe: [`${P}.hb.compute.*`, `${P}.node.*.pkt`, `${P}.node.*.msg.*`, `${P}.ctl.membership`, `${P}.ctl.recovery.*`, `${P}.ctl.fault.*`, `${P}.ctl.fiss.switch`, `${P}.ctl.fiss.*.*`, `${P}.ctl.queue.*.*`, INBOX],
        allowResponses: true,
      };
    case 'memory-node':
      return { publish: [`${P}.hb.memory.*`, `${P}.node.*.msg.*`, `${P}.ctl.recovery.phase`], subscribe: [`${P}.node.*.msg.*`, `${P}.ctl.membership`, `${P}.ctl.recovery.*`, `${P}.ctl.fault.*`, INBOX], allowResponses: true };
    case 'switch':
      return {
        publish: [`${P}.hb.switch.*`, `${P}.node.*.pkt`, `${P}.ctl.fiss.switch`],
        subscribe: [`${P}.sw.*.in`, `${P}.ctl.fiss.switch.admit`, `${P}.ctl.membership`, `${P}.ctl.fault.*`, `${P}.ctl.recovery.*`, INBOX],
        allowResponses: true,
      };
  }
}

/** Compute pods of a StatefulSet, one NKey each: pod `compute-node-<i>` is node `idBase + i`. */
export interface ComputePods {
  readonly count: number;
  readonly idBase: number;
}

/**
 * What compute pod `compute-node-<i>` (node `id`) may do: the compute role narrowed to its own
 * node, so it cannot publish another node's heartbeat or read its packets, mailbox or queue
 * orders. Racks are not known per pod, so any rack's switch input stays allowed.
 */
export function computePodPermissions(id: number): Permissions {
  return {
    // The sender is the mailbox subject's last token: a pod may send only as its own node.
    publish: [`${P}.hb.compute.${id}`, `${P}.sw.*.in`, `${P}.node.*.msg.${id}`, `${P}.ctl.fiss.stuck`],
    subscribe: [`${P}.hb.compute.${id}`, `${P}.node.${id}.pkt`, `${P}.node.${id}.msg.*`, `${P}.ctl.membership`, `${P}.ctl.recovery.*`, `${P}.ctl.fault.*`, `${P}.ctl.fiss.switch`, `${P}.ctl.fiss.${id}.*`, `${P}.ctl.queue.${id}.*`, INBOX],
    allowResponses: true,
  };
}

/** The seed file name of compute pod `i` in the compute Secret; pods pick theirs by pod name. */
export const computePodSeedName = (i: number) => `compute-node-${i}.seed`;

/**
 * A seed per role and the whole nats-server config (port 4222, monitoring 8222) naming their
 * public keys; with `tls` (paths as the server sees them), clients must connect over TLS. With
 * `computePods`, compute nodes get a key per pod (`podSeeds`, by seed file name) instead of one
 * shared role key (issue 19: one compute pod cannot speak as another).
 */
export function roleNatsCredentials(tls?: TlsFiles, computePods?: ComputePods): { seeds: Record<NatsRoleName, string>; podSeeds: Record<string, string>; serverConfig: string } {
  const list = (items: readonly string[]) => `[${items.map((s) => JSON.stringify(s)).join(', ')}]`;
  const seeds = {} as Record<NatsRoleName, string>;
  const podSeeds: Record<string, string> = {};
  const user = (comment: string, publicKey: string, p: Permissions) =>
    [
      `    # ${comment}`,
      `    { nkey: ${JSON.stringify(publicKey)}, permissions: {`,
      `      publish: { allow: ${list(p.publish)} }`,
      `      subscribe: { allow: ${list(p.subscribe)} }`,
      `      allow_responses: ${p.allowResponses}`,
      '    } }',
    ].join('\n');
  const pods = Array.from({ length: computePods?.count ?? 0 }, (_, i) => {
    const kp = createUser();
    podSeeds[computePodSeedName(i)] = new TextDecoder().decode(kp.getSeed());
    const id = (computePods?.idBase ?? 0) + i;
    return user(`compute-node-${i} (node ${id})`, kp.getPublicKey(), computePodPermissions(id));
  });
  const users = NATS_ROLES.filter((role) => !(computePods && role === 'compute-node')).map((role) => {
    const kp = createUser();
    seeds[role] = new TextDecoder().decode(kp.getSeed());
    return user(role, kp.getPublicKey(), rolePermissions(role));
  });
  const serverConfig = `port: 4222\nhttp_port: 8222\nmax_payload: 1MB\n${tls ? natsServerTlsBlock(tls) : ''}authorization {\n  users = [\n${[...users, ...pods].join('\n')}\n  ]\n}\n`;
  return { seeds, podSeeds, serverConfig };
}
