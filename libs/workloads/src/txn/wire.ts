import { ConfigError, errorMessage } from '@lockfabric/ports';
import type { TxnRunSpec, TxnTemplate, TxnWorkloadSpec } from './types.js';

/**
 * Reserved key of `WorkloadSpec.options` on the wire that carries a transactional run to the
 * compute nodes (JSON). `runSpecFromWire` takes it out again, so protocols never see it.
 */
export const TXN_WIRE_OPTION = 'lockfabric.transactions';

type WireTemplate = readonly [string, readonly number[]];

/** JSON text of a run spec; trace transactions go as [type, [lock·2 + exclusive, …]]. */
export function encodeTxnRunSpec(spec: TxnRunSpec): string {
  const w = spec.workload;
  const workload = w.kind === 'trace' ? { kind: 'trace', ...(w.name ? { name: w.name } : {}), compact: w.transactions.map((t): WireTemplate => [t.type, t.locks.map((l) => l.lock * 2 + (l.mode === 'exclusive' ? 1 : 0))]) } : w;
  return JSON.stringify({ ...spec, workload });
}

/** Inverse of {@link encodeTxnRunSpec}; throws ConfigError when the text is not one. */
export function decodeTxnRunSpec(text: string): TxnRunSpec {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`option ${TXN_WIRE_OPTION} is not JSON: ${errorMessage(error)}`]);
  }
  const spec = raw as TxnRunSpec & { workload: TxnWorkloadSpec & { compact?: readonly WireTemplate[] } };
  if (typeof spec !== 'object' || spec === null || typeof spec.workload !== 'object' || spec.workload === null) throw new ConfigError([`option ${TXN_WIRE_OPTION} holds no transaction workload`]);
  if (spec.workload.kind !== 'trace') return spec;
  const compact = spec.workload.compact;
  if (!Array.isArray(compact)) throw new ConfigError([`option ${TXN_WIRE_OPTION}: a trace workload without transactions`]);
  // The option arrives from the network: check each template's shape before destructuring it.
  const bad = compact.findIndex((t: unknown) => !isWireTemplate(t));
  if (bad >= 0) throw new ConfigError([`option ${TXN_WIRE_OPTION}: transaction ${bad} is not [type, [lock*2+exclusive, ...]]`]);
  const transactions: TxnTemplate[] = compact.map(([type, locks]: WireTemplate) => ({ type, locks: locks.map((v: number) => ({ lock: Math.floor(v / 2), mode: v % 2 === 1 ? 'exclusive' : 'shared' })) }));
  const { compact: _compact, ...rest } = spec.workload;
  return { ...spec, workload: { ...rest, kind: 'trace', transactions } };
}

function isWireTemplate(value: unknown): value is WireTemplate {
  if (!Array.isArray(value) || value.length !== 2) return false;
  const [type, locks] = value as unknown[];
  return typeof type === 'string' && Array.isArray(locks) && locks.every((v) => Number.isSafeInteger(v) && (v as number) >= 0);
}
