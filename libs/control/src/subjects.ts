import type { NodeId } from '@lockfabric/ports';
import { LockFabricError } from '@lockfabric/ports';

/** A subject token was empty, contained a NATS wildcard or separator, or a number was not an id. */
export class SubjectTokenError extends LockFabricError {
  readonly code = 'SUBJECT_TOKEN';
  constructor(
    readonly field: string,
    readonly value: unknown,
  ) {
    super(`${field} ${JSON.stringify(value)} cannot be a NATS subject token: use letters, digits, '-' or '_' (ids: non-negative integers)`);
    this.name = 'SubjectTokenError';
  }
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

function token(field: string, value: string): string {
  if (!TOKEN.test(value)) throw new SubjectTokenError(field, value);
  return value;
}

/** Second tokens of other control subjects: a recovery-call family must not share them (`report` would alias protocolReport). */
const RESERVED_FAMILIES = new Set(['membership', 'recovery', 'fault', 'switch', 'report']);

function callFamily(family: string): string {
  if (RESERVED_FAMILIES.has(family)) throw new SubjectTokenError('family', family);
  return token('family', family);
}

function id(field: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new SubjectTokenError(field, value);
  return String(value);
}

/** Every NATS subject of one cluster (DESIGN §4). Nobody else writes subject strings. */
export interface Subjects {
  /** `lf.<cluster>`, without a trailing dot. */
  readonly prefix: string;
  /** Packets into the switch of a rack. */
  switchIn(rack: number): string;
  /** The switch of a rack answers requests here with their own payload: the transport floor of a switch lock. */
  switchEcho(rack: number): string;
  /** Switch egress to a machine. */
  nodePackets(machine: NodeId): string;
  /**
   * Client-to-client SENDs from the clients of machine `from` to those of machine `machine`. The
   * sender is in the subject so that the server's permissions can hold each node to its own id and
   * the receiver can take the sender from the subject rather than from the payload.
   */
  nodeMessages(machine: NodeId, from: NodeId): string;
  /** Matches nodeMessages(machine, any sender): what a node subscribes to. */
  nodeInbox(machine: NodeId): string;
  /** Matches nodeMessages(any machine, from): what node `from` may publish. */
  nodeOutbox(from: NodeId): string;
  heartbeat(role: string, id: string): string;
  /** Matches every heartbeat(role, id). */
  heartbeatAll(): string;
  membership(): string;
  /** A starting coordinator asks the participants for the newest view they hold (request/reply). */
  membershipRecall(): string;
  recovery(phase: string): string;
  /** Matches every recovery(phase). */
  recoveryAll(): string;
  fault(target: string): string;
  /** Matches every fault(target). */
  faultAll(): string;
  driver(name: string): string;
  /**
   * A protocol's recovery calls from the coordinator to one compute node (request/reply), under the
   * subject family the protocol's control package names (FissLock's S1–S3: pause, report, apply, resume).
   */
  recoveryCall(family: string, machine: NodeId, verb: string): string;
  /** Matches recoveryCall(any family, machine, any verb): what a compute node subscribes to. */
  recoveryCallsTo(machine: NodeId): string;
  /** Where a switch announces its control address (the coordinator's recovery drivers write its registers). */
  switchAnnounce(): string;
  /** The coordinator's admission orders to the switches (which node may send, from which epoch). */
  switchAdmission(): string;
  /** A compute node's report to the coordinator under a protocol's family (FissLock's stuck-lock watchdog). */
  protocolReport(family: string, name: string): string;
  /** Matches every protocolReport: what a compute node may publish. */
  protocolReportAll(): string;
  /** Scratch subjects of the raw transport benchmarks. */
  raw(name: string): string;
}

export function createSubjects(cluster: string): Subjects {
  const prefix = `lf.${token('cluster', cluster)}`;
  return {
    prefix,
    switchIn: (rack) => `${prefix}.sw.${id('rack', rack)}.in`,
    switchEcho: (rack) => `${prefix}.sw.${id('rack', rack)}.echo`,
    nodePackets: (machine) => `${prefix}.node.${id('machine', machine)}.pkt`,
    nodeMessages: (machine, from) => `${prefix}.node.${id('machine', machine)}.msg.${id('from', from)}`,
    nodeInbox: (machine) => `${prefix}.node.${id('machine', machine)}.msg.*`,
    nodeOutbox: (from) => `${prefix}.node.*.msg.${id('from', from)}`,
    heartbeat: (role, instance) => `${prefix}.hb.${token('role', role)}.${token('id', instance)}`,
    heartbeatAll: () => `${prefix}.hb.*.*`,
    membership: () => `${prefix}.ctl.membership`,
    membershipRecall: () => `${prefix}.ctl.membership.recall`,
    recovery: (phase) => `${prefix}.ctl.recovery.${token('phase', phase)}`,
    recoveryAll: () => `${prefix}.ctl.recovery.*`,
    fault: (target) => `${prefix}.ctl.fault.${token('target', target)}`,
    faultAll: () => `${prefix}.ctl.fault.*`,
    driver: (name) => `${prefix}.driver.${token('name', name)}`,
    recoveryCall: (family, machine, verb) => `${prefix}.ctl.${callFamily(family)}.${id('machine', machine)}.${token('verb', verb)}`,
    recoveryCallsTo: (machine) => `${prefix}.ctl.*.${id('machine', machine)}.*`,
    switchAnnounce: () => `${prefix}.ctl.switch`,
    switchAdmission: () => `${prefix}.ctl.switch.admit`,
    protocolReport: (family, name) => `${prefix}.ctl.report.${token('family', family)}.${token('name', name)}`,
    protocolReportAll: () => `${prefix}.ctl.report.>`,
    raw: (name) => `${prefix}.raw.${token('name', name)}`,
  };
}
