import { createUser } from '@nats-io/nkeys';
import { createSubjects, type Subjects } from '@lockfabric/live';
import { ClusterStateError } from './errors.js';

/** The cluster name whose `raw` subjects the transport benchmark uses. */
export const TRANSPORT_BENCH_CLUSTER = 'transport';

/**
 * NATS identities of one cluster run and the nats-server authorization that grants each only the
 * subjects its role uses. Each service gets an NKey user: the server stores only
 * the public key, the service holds the seed. Least privilege by role:
 * - a compute node publishes its own heartbeat, into the switches it talks to (its rack's unless
 *   `switchRacks` says more), to mailboxes and the FissLock stuck-lock report; it receives only
 *   its own packets, mailbox and recovery calls;
 * - only the coordinator publishes membership, failure notices and recovery orders;
 * - only a switch publishes egress to nodes.
 */
export type NatsRole = 'coordinator' | 'compute' | 'memory' | 'switch' | 'driver';

export interface NatsIdentity {
  readonly role: NatsRole;
  /** The service instance: a machine id, memory node id, or rack. */
  readonly id: string;
  /** Public NKey (U…), written into the server config. */
  readonly publicKey: string;
  /** NKey seed (SU…), given only to the service; a secret. */
  readonly seed: string;
}

export interface Permissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
  /** May answer requests it received (request/reply) without a publish grant on other inboxes. */
  readonly allowResponses: boolean;
}

export interface ServiceSpec {
  readonly role: NatsRole;
  readonly id: string;
  /** The rack a compute node is wired to, or the rack a switch serves. */
  readonly rack?: number;
  /**
   * Compute nodes: the racks whose switch input it may publish (default: its own rack only). A
   * client that sends a lock's packets to the switch owning the lock id, in another rack, needs
   * those racks listed here.
   */
  readonly switchRacks?: readonly number[];
}

const INBOX = '_INBOX.>';

/** The subjects a service may publish and subscribe to. */
export function permissionsFor(subjects: Subjects, service: ServiceSpec): Permissions {
  const all = `${subjects.prefix}.>`;
  const rack = service.rack ?? 0;
  switch (service.role) {
    case 'coordinator':
      // The control plane runs everything: orders, faults, recovery calls.
      return { publish: [all, INBOX], subscribe: [all, INBOX], allowResponses: true };
    case 'driver': {
      // The operator's tool too, plus the scratch subjects of `lockfabric transport` (its own prefix).
      const raw = `${createSubjects(TRANSPORT_BENCH_CLUSTER).prefix}.raw.>`;
      return { publish: [all, raw, INBOX], subscribe: [all, raw, INBOX], allowResponses: true };
    }
    case 'compute': {
      const machine = Number(service.id);
      const switchInputs = [...new Set(service.switchRacks ?? [rack])].map((r) => subjects.switchIn(r));
      return {
        publish: [subjects.heartbeat('compute', service.id), ...switchInputs, subjects.nodeOutbox(machine), subjects.protocolReportAll()],
        subscribe: [
          // Its own heartbeat too: the rejoin watch (libs/control) listens for it.
          subjects.heartbeat('compute', service.id),
          subjects.nodePackets(machine),
          subjects.nodeInbox(machine),
          subjects.membership(),
          // a starting coordinator asks for the newest view this node holds (libs/control view-recall.ts)
          subjects.membershipRecall(),
          subjects.recoveryAll(),
          subjects.faultAll(),
          subjects.switchAnnounce(),
          // every protocol's recovery calls to this node (FissLock S1–S3, queue-lock gate/abort/reset)
          subjects.recoveryCallsTo(machine),
          INBOX,
        ],
        allowResponses: true,
      };
    }
    case 'memory':
      // A memory node runs server-side protocol services (its own mailbox) that answer compute nodes'
      // clients, and reports its part of a compute node's recovery (fence, table clear) on recovery.phase.
      return { publish: [subjects.heartbeat('memory', service.id), subjects.nodeOutbox(Number(service.id)), subjects.recovery('phase')], subscribe: [subjects.nodeInbox(Number(service.id)), subjects.membership(), subjects.recoveryAll(), subjects.faultAll(), INBOX], allowResponses: true };
    case 'switch':
      return {
        publish: [subjects.heartbeat('switch', service.id), subjects.nodePackets(0).replace(/\.node\.0\./, '.node.*.'), subjects.switchAnnounce()],
        // its own rack's echo subject too: the floor `bench` measures, answered through allow_responses
        subscribe: [subjects.switchIn(rack), subjects.switchEcho(rack), subjects.switchAdmission(), subjects.membership(), subjects.faultAll(), subjects.recoveryAll(), INBOX],
        allowResponses: true,
      };
  }
}

/** A fresh NKey user per service, for one run. */
export function createIdentities(services: readonly ServiceSpec[]): NatsIdentity[] {
  return services.map((s) => {
    const kp = createUser();
    return { role: s.role, id: s.id, publicKey: kp.getPublicKey(), seed: new TextDecoder().decode(kp.getSeed()) };
  });
}

/** nats-server `authorization` block: one NKey user per identity with its permissions. */
export function natsAuthorizationConfig(
  subjects: Subjects,
  services: readonly ServiceSpec[],
  identities: readonly NatsIdentity[],
  permissions: (subjects: Subjects, service: ServiceSpec) => Permissions = permissionsFor,
): string {
  const list = (items: readonly string[]) => `[${items.map((s) => JSON.stringify(s)).join(', ')}]`;
  const users = services.map((service, i) => {
    const identity = identities[i];
    if (identity === undefined || identity.role !== service.role || identity.id !== service.id) throw new ClusterStateError(`no identity for ${service.role} ${service.id}`);
    const p = permissions(subjects, service);
    return [
      `    # ${service.role} ${service.id}`,
      `    { nkey: ${JSON.stringify(identity.publicKey)}, permissions: {`,
      `      publish: { allow: ${list(p.publish)} }`,
      `      subscribe: { allow: ${list(p.subscribe)} }`,
      p.allowResponses ? '      allow_responses: true' : '',
      '    } }',
    ]
      .filter((line) => line !== '')
      .join('\n');
  });
  return `authorization {\n  users = [\n${users.join('\n')}\n  ]\n}\n`;
}
