import type { TlsFiles } from '@lockfabric/live';
import { natsServerTlsBlock } from './nats-tls.js';
import { createUser } from '@nats-io/nkeys';
import type { Permissions } from './nats-auth.js';

/**
 * NATS identities for compose and Kubernetes. A role key is shared by every pod of its role, so
 * its permissions are per role: a compute pod cannot publish membership, recovery orders or switch
 * egress, but could publish another compute node's heartbeat. Per-pod keys (`certs create
 * --compute-nodes/--memory-nodes/--switches N`) narrow each pod to its own node's subjects.
 * Subjects match any cluster name (`lf.*.…`), so one server config serves the dev and bench overlays.
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
        publish: [`${P}.hb.compute.*`, `${P}.sw.*.in`, `${P}.node.*.msg.*`, `${P}.ctl.report.>`],
        subscribe: [`${P}.hb.compute.*`, `${P}.node.*.pkt`, `${P}.node.*.msg.*`, `${P}.ctl.membership`, `${P}.ctl.membership.recall`, `${P}.ctl.recovery.*`, `${P}.ctl.fault.*`, `${P}.ctl.switch`, `${P}.ctl.*.*.*`, INBOX],
        allowResponses: true,
      };
    case 'memory-node':
      return { publish: [`${P}.hb.memory.*`, `${P}.node.*.msg.*`, `${P}.ctl.recovery.phase`], subscribe: [`${P}.node.*.msg.*`, `${P}.ctl.membership`, `${P}.ctl.recovery.*`, `${P}.ctl.fault.*`, INBOX], allowResponses: true };
    case 'switch':
      return {
        publish: [`${P}.hb.switch.*`, `${P}.node.*.pkt`, `${P}.ctl.switch`],
        subscribe: [`${P}.sw.*.in`, `${P}.sw.*.echo`, `${P}.ctl.switch.admit`, `${P}.ctl.membership`, `${P}.ctl.fault.*`, `${P}.ctl.recovery.*`, INBOX],
        allowResponses: true,
      };
  }
}

/** Pods of one StatefulSet, one NKey each: pod `<set>-<i>` is node `idBase + i`. */
export interface StatefulSetPods {
  readonly count: number;
  readonly idBase: number;
}

/** Compute pods, with the rack each is wired to and the racks whose switch input it may publish. */
export interface ComputePods extends StatefulSetPods {
  /** Rack of pod `i` (`racks[i]`; a single value is every pod's rack). Default rack 0. */
  readonly racks?: readonly number[];
  /** Racks whose switch every pod may send to besides its own (locks partitioned over racks). */
  readonly extraSwitchRacks?: readonly number[];
}

/**
 * Which StatefulSets get a key per pod instead of the shared role key: a pod can then
 * speak only as its own node. Switch pod `switch-dataplane-<i>` serves rack `i`.
 */
export interface PodKeys {
  readonly compute?: ComputePods;
  readonly memory?: StatefulSetPods;
  readonly switches?: StatefulSetPods;
}

/** The rack of compute pod `i`. */
export function computePodRack(pods: ComputePods, i: number): number {
  const racks = pods.racks ?? [0];
  return (racks.length === 1 ? racks[0] : racks[i]) ?? 0;
}

/**
 * What compute pod `compute-node-<i>` (node `id`) may do: the compute role narrowed to its own
 * node, so it cannot publish another node's heartbeat or read its packets, mailbox or queue
 * orders, and into the switches of `switchRacks` only (its own rack, plus any it is told to use).
 */
export function computePodPermissions(id: number, switchRacks: readonly number[] = [0]): Permissions {
  return {
    // The sender is the mailbox subject's last token: a pod may send only as its own node.
    publish: [`${P}.hb.compute.${id}`, ...[...new Set(switchRacks)].map((r) => `${P}.sw.${r}.in`), `${P}.node.*.msg.${id}`, `${P}.ctl.report.>`],
    subscribe: [`${P}.hb.compute.${id}`, `${P}.node.${id}.pkt`, `${P}.node.${id}.msg.*`, `${P}.ctl.membership`, `${P}.ctl.membership.recall`, `${P}.ctl.recovery.*`, `${P}.ctl.fault.*`, `${P}.ctl.switch`, `${P}.ctl.*.${id}.*`, INBOX],
    allowResponses: true,
  };
}

/** Memory pod `memory-node-<i>` (node `id`): its own heartbeat and mailbox, and its part of recovery. */
export function memoryPodPermissions(id: number): Permissions {
  return {
    publish: [`${P}.hb.memory.${id}`, `${P}.node.*.msg.${id}`, `${P}.ctl.recovery.phase`],
    subscribe: [`${P}.node.${id}.msg.*`, `${P}.ctl.membership`, `${P}.ctl.recovery.*`, `${P}.ctl.fault.*`, INBOX],
    allowResponses: true,
  };
}

/** Switch pod `switch-dataplane-<rack>` (node `id`): its own heartbeat, and only its rack's input. */
export function switchPodPermissions(id: number, rack: number): Permissions {
  return {
    publish: [`${P}.hb.switch.${id}`, `${P}.node.*.pkt`, `${P}.ctl.switch`],
    subscribe: [`${P}.sw.${rack}.in`, `${P}.sw.${rack}.echo`, `${P}.ctl.switch.admit`, `${P}.ctl.membership`, `${P}.ctl.fault.*`, `${P}.ctl.recovery.*`, INBOX],
    allowResponses: true,
  };
}

/** The StatefulSet whose pods run each role (pod names are `<set>-<ordinal>`). */
export const STATEFUL_SET_OF = { 'compute-node': 'compute-node', 'memory-node': 'memory-node', switch: 'switch-dataplane' } as const;

/** The seed file of pod `<set>-<i>` in its role's Secret; a pod reads the one named after itself. */
export const podSeedName = (role: keyof typeof STATEFUL_SET_OF, i: number) => `${STATEFUL_SET_OF[role]}-${i}.seed`;
export const computePodSeedName = (i: number) => podSeedName('compute-node', i);

/**
 * A seed per role and the whole nats-server config (port 4222, monitoring 8222) naming their
 * public keys; with `tls` (paths as the server sees them), clients must connect over TLS. A role
 * with a `pods` entry gets a key per pod (`podSeeds[role]`, by seed file name) instead of one
 * shared role key (one pod cannot speak as another).
 */
export function roleNatsCredentials(
  tls?: TlsFiles,
  pods: PodKeys = {},
): { seeds: Partial<Record<NatsRoleName, string>>; podSeeds: Partial<Record<NatsRoleName, Record<string, string>>>; serverConfig: string } {
  const list = (items: readonly string[]) => `[${items.map((s) => JSON.stringify(s)).join(', ')}]`;
  const seeds: Partial<Record<NatsRoleName, string>> = {};
  const podSeeds: Partial<Record<NatsRoleName, Record<string, string>>> = {};
  const user = (comment: string, publicKey: string, p: Permissions) =>
    [
      `    # ${comment}`,
      `    { nkey: ${JSON.stringify(publicKey)}, permissions: {`,
      `      publish: { allow: ${list(p.publish)} }`,
      `      subscribe: { allow: ${list(p.subscribe)} }`,
      `      allow_responses: ${p.allowResponses}`,
      '    } }',
    ].join('\n');
  const perPod = (role: keyof typeof STATEFUL_SET_OF, set: StatefulSetPods | undefined, permissions: (id: number, i: number) => Permissions) =>
    Array.from({ length: set?.count ?? 0 }, (_, i) => {
      const kp = createUser();
      (podSeeds[role] ??= {})[podSeedName(role, i)] = new TextDecoder().decode(kp.getSeed());
      const id = (set?.idBase ?? 0) + i;
      return user(`${STATEFUL_SET_OF[role]}-${i} (node ${id})`, kp.getPublicKey(), permissions(id, i));
    });
  const { compute, memory, switches } = pods;
  const podUsers = [
    ...perPod('compute-node', compute, (id, i) => {
      const own = computePodRack(compute as ComputePods, i);
      return computePodPermissions(id, [own, ...(compute?.extraSwitchRacks ?? [])]);
    }),
    ...perPod('memory-node', memory, (id) => memoryPodPermissions(id)),
    ...perPod('switch', switches, (id, i) => switchPodPermissions(id, i)),
  ];
  const hasPods = (role: NatsRoleName) => (role === 'compute-node' && compute) || (role === 'memory-node' && memory) || (role === 'switch' && switches);
  const users = NATS_ROLES.filter((role) => !hasPods(role)).map((role) => {
    const kp = createUser();
    seeds[role] = new TextDecoder().decode(kp.getSeed());
    return user(role, kp.getPublicKey(), rolePermissions(role));
  });
  const serverConfig = `port: 4222\nhttp_port: 8222\nmax_payload: 1MB\n${tls ? natsServerTlsBlock(tls) : ''}authorization {\n  users = [\n${[...users, ...podUsers].join('\n')}\n  ]\n}\n`;
  return { seeds, podSeeds, serverConfig };
}
