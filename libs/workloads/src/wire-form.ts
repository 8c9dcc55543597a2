import { create } from '@bufbuild/protobuf';
import type { HistoryEvent } from '@lockfabric/check';
import { ConfigError, errorMessage } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import { HistoryEventSchema, HistoryOp, HistoryPhase, LockMode as WireLockMode, WorkloadSpecSchema } from '@lockfabric/wire';
import type { HistoryEvent as WireHistoryEvent, WorkloadSpec as WireWorkloadSpec } from '@lockfabric/wire';
import { formatDistribution, parseDistribution, validateWorkloadSpec } from './spec.js';
import { DEFAULT_CS_VERB_BYTES } from './cs-data.js';
import type { LockIdSpace, WorkloadSpec } from './spec.js';
import { TXN_WIRE_OPTION, decodeTxnRunSpec, encodeTxnRunSpec } from './txn/wire.js';
import { APP_WIRE_OPTION, decodeAppSpec, encodeAppSpec } from './apps/wire.js';
import type { HotspotSpec } from './hotspot.js';

/** Reserved option on the wire that carries the dynamic workload's hotspot (JSON). */
export const HOTSPOT_WIRE_OPTION = 'lockfabric.hotspot';
/** Reserved option on the wire for the critical section's data verbs: `<verbs>x<bytes>` (bench --cs-verbs). */
export const CS_VERBS_WIRE_OPTION = 'lockfabric.csVerbs';

function decodeCsVerbs(text: string): { csVerbs: number; csVerbBytes?: number } {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (!match) throw new ConfigError([`option ${CS_VERBS_WIRE_OPTION}: expected <verbs>x<bytes>, got ${JSON.stringify(text)}`]);
  return { csVerbs: Number(match[1]), csVerbBytes: Number(match[2]) };
}

function decodeHotspot(text: string): HotspotSpec {
  try {
    return JSON.parse(text) as HotspotSpec;
  } catch (error) {
    throw new ConfigError([`option ${HOTSPOT_WIRE_OPTION} is not JSON: ${errorMessage(error)}`]);
  }
}

/** A workload as it travels from the driver to compute nodes; `options` are the protocol's. */
export interface RunSpec {
  readonly protocol: string;
  readonly workload: WorkloadSpec;
  readonly options: Readonly<Record<string, string>>;
}

export function runSpecToWire(spec: RunSpec): WireWorkloadSpec {
  const w = spec.workload;
  const csVerbs: Record<string, string> = (w.csVerbs ?? 0) > 0 ? { [CS_VERBS_WIRE_OPTION]: `${w.csVerbs}x${w.csVerbBytes ?? DEFAULT_CS_VERB_BYTES}` } : {};
  return create(WorkloadSpecSchema, {
    protocol: spec.protocol,
    clients: w.clients,
    locks: w.locks,
    readRatio: w.readRatio,
    distribution: formatDistribution(w.distribution),
    durationMs: BigInt(w.durationMs ?? 0),
    operations: BigInt(w.operations ?? 0),
    thinkNs: BigInt(Math.round(w.thinkNs)),
    criticalSectionNs: BigInt(Math.round(w.criticalSectionNs)),
    seed: BigInt(w.seed),
    timeoutMs: BigInt(w.timeoutMs ?? 0),
    options: { ...spec.options, ...(w.transactions ? { [TXN_WIRE_OPTION]: encodeTxnRunSpec(w.transactions) } : {}), ...(w.application ? { [APP_WIRE_OPTION]: encodeAppSpec(w.application) } : {}), ...(w.hotspot ? { [HOTSPOT_WIRE_OPTION]: JSON.stringify(w.hotspot) } : {}), ...csVerbs },
    // empty for dense, so a dense run's wire form is what it was before the field existed
    lockIds: w.lockIds === 'sparse' ? 'sparse' : '',
  });
}

/** Decodes and validates; throws ConfigError with every problem. */
export function runSpecFromWire(wire: WireWorkloadSpec): RunSpec {
  // A transactional run rides in a reserved option; protocols get the options without it.
  const { [TXN_WIRE_OPTION]: txnText, [APP_WIRE_OPTION]: appText, [HOTSPOT_WIRE_OPTION]: hotspotText, [CS_VERBS_WIRE_OPTION]: csText, ...options } = wire.options;
  const csVerbs = csText !== undefined ? decodeCsVerbs(csText) : undefined;
  const hotspot = hotspotText !== undefined ? decodeHotspot(hotspotText) : undefined;
  const transactions = txnText !== undefined ? decodeTxnRunSpec(txnText) : undefined;
  const application = appText !== undefined ? decodeAppSpec(appText) : undefined;
  const workload: WorkloadSpec = {
    clients: wire.clients,
    locks: wire.locks,
    readRatio: wire.readRatio,
    distribution: parseDistribution(wire.distribution || 'uniform'),
    ...(wire.durationMs > 0n ? { durationMs: Number(wire.durationMs) } : {}),
    ...(wire.operations > 0n ? { operations: Number(wire.operations) } : {}),
    thinkNs: Number(wire.thinkNs),
    criticalSectionNs: Number(wire.criticalSectionNs),
    seed: Number(wire.seed),
    ...(wire.timeoutMs > 0n ? { timeoutMs: Number(wire.timeoutMs) } : {}),
    // checked with the rest below; `dense` and empty both mean the default
    ...(wire.lockIds && wire.lockIds !== 'dense' ? { lockIds: wire.lockIds as LockIdSpace } : {}),
    ...(transactions ? { transactions } : {}),
    ...(application ? { application } : {}),
    ...(hotspot ? { hotspot } : {}),
    ...csVerbs,
  };
  const problems = validateWorkloadSpec(workload);
  if (problems.length > 0) throw new ConfigError(problems);
  return { protocol: wire.protocol, workload, options };
}

const MODE_TO_WIRE: Record<LockMode, WireLockMode> = { shared: WireLockMode.SHARED, exclusive: WireLockMode.EXCLUSIVE };

export function historyEventToWire(event: HistoryEvent): WireHistoryEvent {
  return create(HistoryEventSchema, {
    client: event.client,
    lock: event.lock,
    mode: MODE_TO_WIRE[event.mode],
    op: event.op === 'acquire' ? HistoryOp.ACQUIRE : HistoryOp.RELEASE,
    phase: event.phase === 'invoke' ? HistoryPhase.INVOKE : event.phase === 'ok' ? HistoryPhase.OK : HistoryPhase.FAIL,
    timeNs: BigInt(Math.round(event.timeNs)),
    error: event.error ?? '',
  });
}

export function historyEventFromWire(wire: WireHistoryEvent): HistoryEvent {
  const base = {
    client: wire.client,
    lock: wire.lock,
    mode: wire.mode === WireLockMode.SHARED ? ('shared' as const) : ('exclusive' as const),
    op: wire.op === HistoryOp.ACQUIRE ? ('acquire' as const) : ('release' as const),
    phase: wire.phase === HistoryPhase.INVOKE ? ('invoke' as const) : wire.phase === HistoryPhase.OK ? ('ok' as const) : ('fail' as const),
    timeNs: Number(wire.timeNs),
  };
  return wire.error ? { ...base, error: wire.error } : base;
}
