import type { VerbOpcode } from '@lockfabric/ports';

/*
 * The LockFabric telemetry vocabulary: span names, attribute keys (all under `lockfabric.`),
 * well-known attribute values and metric names. docs/telemetry.md documents every entry of
 * `ATTRIBUTE_REGISTRY`; a test keeps the two in step.
 */

// ── Span names ─────────────────────────────────────────────────────────────────────────────────
export const SPAN_LOCK_ACQUIRE = 'lock.acquire';
export const SPAN_LOCK_RELEASE = 'lock.release';
export const SPAN_LOCK_HANDOVER = 'lock.handover';
export const SPAN_LOCK_RESET = 'lock.reset';
export const SPAN_VERB_READ = 'verb.read';
export const SPAN_VERB_WRITE = 'verb.write';
export const SPAN_VERB_CAS = 'verb.cas';
export const SPAN_VERB_FAA = 'verb.faa';
export const SPAN_VERB_MASKED_CAS = 'verb.masked-cas';
export const SPAN_VERB_MASKED_FAA = 'verb.masked-faa';
export const SPAN_SWITCH_PACKET = 'switch.packet';
export const SPAN_RECOVERY_S1 = 'recovery.S1';
export const SPAN_RECOVERY_S2 = 'recovery.S2';
export const SPAN_RECOVERY_S3 = 'recovery.S3';

const VERB_SPANS: Readonly<Record<VerbOpcode, string>> = {
  read: SPAN_VERB_READ,
  write: SPAN_VERB_WRITE,
  cas: SPAN_VERB_CAS,
  faa: SPAN_VERB_FAA,
  'masked-cas': SPAN_VERB_MASKED_CAS,
  'masked-faa': SPAN_VERB_MASKED_FAA,
};

/** `verb.<op>` for a verb opcode. */
export function verbSpanName(op: VerbOpcode): string {
  return VERB_SPANS[op];
}

export type RecoveryPhase = 'S1' | 'S2' | 'S3';

const RECOVERY_SPANS: Readonly<Record<RecoveryPhase, string>> = {
  S1: SPAN_RECOVERY_S1,
  S2: SPAN_RECOVERY_S2,
  S3: SPAN_RECOVERY_S3,
};

/** `recovery.S1|S2|S3` for a recovery phase. */
export function recoverySpanName(phase: RecoveryPhase): string {
  return RECOVERY_SPANS[phase];
}

/** Every span name LockFabric emits. */
export const SPAN_NAMES: readonly string[] = [
  SPAN_LOCK_ACQUIRE,
  SPAN_LOCK_RELEASE,
  SPAN_LOCK_HANDOVER,
  SPAN_LOCK_RESET,
  ...Object.values(VERB_SPANS),
  SPAN_SWITCH_PACKET,
  ...Object.values(RECOVERY_SPANS),
];

// ── Attribute keys ─────────────────────────────────────────────────────────────────────────────
export const ATTR_PROTOCOL = 'lockfabric.protocol';
export const ATTR_LOCK_ID = 'lockfabric.lock.id';
export const ATTR_LOCK_MODE = 'lockfabric.lock.mode';
export const ATTR_OUTCOME = 'lockfabric.outcome';
export const ATTR_VERBS = 'lockfabric.verbs';
export const ATTR_RETRIES = 'lockfabric.retries';
export const ATTR_GRANT_NS = 'lockfabric.grant_ns';
export const ATTR_WAIT_NS = 'lockfabric.wait_ns';
export const ATTR_NODE = 'lockfabric.node';
export const ATTR_CLIENT = 'lockfabric.client';
export const ATTR_MESSAGES = 'lockfabric.messages';
export const ATTR_SWITCH_PACKETS = 'lockfabric.switch_packets';
export const ATTR_VERB_OP = 'lockfabric.verb.op';
export const ATTR_VERB_SIDE = 'lockfabric.verb.side';
export const ATTR_VERB_STATUS = 'lockfabric.verb.status';
export const ATTR_VERB_BATCH_SIZE = 'lockfabric.verb.batch_size';
export const ATTR_VERB_TARGET_NODE = 'lockfabric.verb.target_node';
export const ATTR_PACKET_TYPE = 'lockfabric.packet.type';
export const ATTR_SWITCH_RACK = 'lockfabric.switch.rack';
export const ATTR_SWITCH_PROGRAM = 'lockfabric.switch.program';
export const ATTR_SWITCH_DECISION = 'lockfabric.switch.decision';
export const ATTR_HANDOVER_FROM = 'lockfabric.handover.from';
export const ATTR_HANDOVER_TO = 'lockfabric.handover.to';
export const ATTR_LINK_ROLE = 'lockfabric.link.role';
export const ATTR_EPOCH = 'lockfabric.epoch';
export const ATTR_RECOVERY_PHASE = 'lockfabric.recovery.phase';
export const ATTR_RESET_REASON = 'lockfabric.reset.reason';
export const ATTR_FAILED_NODE = 'lockfabric.failed_node';
export const ATTR_TAIL_KEPT = 'lockfabric.sampling.tail_kept';

// ── Attribute values ───────────────────────────────────────────────────────────────────────────
export const OUTCOME_VALUE_GRANTED = 'granted';
export const OUTCOME_VALUE_RELEASED = 'released';
export const OUTCOME_VALUE_OK = 'ok';
export const OUTCOME_VALUE_TIMEOUT = 'timeout';
export const OUTCOME_VALUE_ABORTED = 'aborted';
export const OUTCOME_VALUE_LEASE_EXPIRED = 'lease-expired';
export const OUTCOME_VALUE_ERROR = 'error';

/** Outcomes that are not failures; any other `lockfabric.outcome` marks the span as failed. */
export const SUCCESS_OUTCOMES: ReadonlySet<string> = new Set([OUTCOME_VALUE_GRANTED, OUTCOME_VALUE_RELEASED, OUTCOME_VALUE_OK]);

export const VERB_SIDE_VALUE_INITIATOR = 'initiator';
export const VERB_SIDE_VALUE_NIC = 'nic';

export const LINK_ROLE_VALUE_PREVIOUS_HOLDER = 'previous-holder';
export const LINK_ROLE_VALUE_NEXT_HOLDER = 'next-holder';
export const LINK_ROLE_VALUE_CAUSE = 'cause';

export const TAIL_KEPT_VALUE_SLOW = 'slow';
export const TAIL_KEPT_VALUE_ERROR = 'error';

// ── Metric names (Prometheus) ──────────────────────────────────────────────────────────────────
export const METRIC_ACQUIRE_GRANT_SECONDS = 'lockfabric_acquire_grant_seconds';
export const METRIC_ACQUIRE_WAIT_SECONDS = 'lockfabric_acquire_wait_seconds';
export const METRIC_VERBS_PER_OPERATION = 'lockfabric_verbs_per_operation';
export const METRIC_NIC_VERBS_TOTAL = 'lockfabric_nic_verbs_total';
export const METRIC_MALFORMED_INPUT_TOTAL = 'lockfabric_malformed_input_total';

// ── Registry (drives docs/telemetry.md) ────────────────────────────────────────────────────────
export type AttributeType = 'string' | 'int' | 'boolean';

export interface AttributeSpec {
  readonly key: string;
  readonly type: AttributeType;
  readonly brief: string;
}

export const ATTRIBUTE_REGISTRY: readonly AttributeSpec[] = [
  { key: ATTR_PROTOCOL, type: 'string', brief: 'protocol id (DESIGN §10), e.g. `dslr`, `fisslock`' },
  { key: ATTR_LOCK_ID, type: 'int', brief: 'lock id, 0 … lockCount-1' },
  { key: ATTR_LOCK_MODE, type: 'string', brief: '`shared` or `exclusive`' },
  { key: ATTR_OUTCOME, type: 'string', brief: 'how the operation ended: `granted`, `released`, `ok`, `timeout`, `aborted`, `lease-expired`, `error`' },
  { key: ATTR_VERBS, type: 'int', brief: 'RDMA verbs the operation issued' },
  { key: ATTR_RETRIES, type: 'int', brief: 'retries (failed CAS, backoff rounds) before the outcome' },
  { key: ATTR_GRANT_NS, type: 'int', brief: 'ns from invoking acquire to holding the lock, on the substrate clock' },
  { key: ATTR_WAIT_NS, type: 'int', brief: 'ns spent waiting for other holders (queued or backing off)' },
  { key: ATTR_NODE, type: 'int', brief: 'node id of the machine that emits the span' },
  { key: ATTR_CLIENT, type: 'string', brief: 'lock client as `node/client`' },
  { key: ATTR_MESSAGES, type: 'int', brief: 'mailbox SENDs the operation issued' },
  { key: ATTR_SWITCH_PACKETS, type: 'int', brief: 'switch packets the operation sent' },
  { key: ATTR_VERB_OP, type: 'string', brief: 'verb opcode: `read`, `write`, `cas`, `faa`, `masked-cas`, `masked-faa`' },
  { key: ATTR_VERB_SIDE, type: 'string', brief: '`initiator` (client) or `nic` (memory node) side of a verb' },
  { key: ATTR_VERB_STATUS, type: 'string', brief: 'completion status (`ok`, `misaligned`, `bad-rkey`, …)' },
  { key: ATTR_VERB_BATCH_SIZE, type: 'int', brief: 'work requests in the doorbell batch' },
  { key: ATTR_VERB_TARGET_NODE, type: 'int', brief: 'node id the verb lands on' },
  { key: ATTR_PACKET_TYPE, type: 'string', brief: 'lock packet type (`acquire`, `grant`, `release`, …)' },
  { key: ATTR_SWITCH_RACK, type: 'int', brief: 'rack of the switch' },
  { key: ATTR_SWITCH_PROGRAM, type: 'string', brief: 'switch program: `fisslock`, `netlock`, `forward`' },
  { key: ATTR_SWITCH_DECISION, type: 'string', brief: 'what the pipeline decided (unicast, multicast, drop, bounce, …)' },
  { key: ATTR_HANDOVER_FROM, type: 'string', brief: 'releasing holder of a handover, `node/client`' },
  { key: ATTR_HANDOVER_TO, type: 'string', brief: 'next holder of a handover, `node/client`' },
  { key: ATTR_LINK_ROLE, type: 'string', brief: 'on a link: `previous-holder`, `next-holder` or `cause`' },
  { key: ATTR_EPOCH, type: 'int', brief: 'membership epoch, era or reset counter fencing the action' },
  { key: ATTR_RECOVERY_PHASE, type: 'string', brief: 'recovery phase `S1`, `S2` or `S3`' },
  { key: ATTR_RESET_REASON, type: 'string', brief: 'why a lock was reset' },
  { key: ATTR_FAILED_NODE, type: 'int', brief: 'node id whose failure triggered recovery' },
  { key: ATTR_TAIL_KEPT, type: 'string', brief: 'set by the exporter on spans head sampling dropped but the tail rule kept: `slow` or `error`' },
];
