import { ConfigError } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import { normalizeLockSet } from './types.js';
import type { TxnLockRequest, TxnTemplate } from './types.js';

/**
 * FissLock's lock-request trace format: one request per line, `txn_id,0,1,lock_id,mode`, mode 1
 * shared and 2 exclusive; the lines of one transaction are consecutive, in request order. The two
 * middle columns are constant in the traces we read and are kept so the form round-trips.
 */
export interface TraceTransaction {
  readonly id: number;
  /** In file order, as written (not normalized). */
  readonly requests: readonly TxnLockRequest[];
}

const MODE_CODE: Record<LockMode, number> = { shared: 1, exclusive: 2 };

/** Parses a trace; throws ConfigError listing every bad line (at most 20, then a count). */
export function parseFissTrace(text: string): TraceTransaction[] {
  const problems: string[] = [];
  const out: { id: number; requests: TxnLockRequest[] }[] = [];
  const seen = new Set<number>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const fields = line.split(',');
    const [id, a, b, lock, mode] = fields.map((f) => Number(f.trim()));
    const where = `trace line ${i + 1}`;
    if (fields.length !== 5 || [id, a, b, lock, mode].some((v) => !Number.isInteger(v))) {
      problems.push(`${where}: expected txn_id,0,1,lock_id,mode (five integers), got ${JSON.stringify(line)}`);
      continue;
    }
    if (a !== 0 || b !== 1) problems.push(`${where}: columns 2 and 3 must be 0 and 1, got ${a} and ${b}`);
    if (mode !== 1 && mode !== 2) problems.push(`${where}: mode must be 1 (shared) or 2 (exclusive), got ${mode}`);
    if (lock! < 0 || lock! > 0xffff_ffff) problems.push(`${where}: lock id ${lock} is outside 0..${0xffff_ffff}`);
    if (id! < 0) problems.push(`${where}: txn_id must be ≥ 0, got ${id}`);
    const last = out[out.length - 1];
    if (last !== undefined && last.id === id) last.requests.push({ lock: lock!, mode: mode === 1 ? 'shared' : 'exclusive' });
    else {
      if (seen.has(id!)) problems.push(`${where}: transaction ${id} appears again after other transactions (its lines must be consecutive)`);
      seen.add(id!);
      out.push({ id: id!, requests: [{ lock: lock!, mode: mode === 1 ? 'shared' : 'exclusive' }] });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems.length > 20 ? [...problems.slice(0, 20), `… and ${problems.length - 20} more`] : problems);
  if (out.length === 0) throw new ConfigError(['the trace holds no transaction']);
  return out;
}

/** Writes transactions in the trace format; `parseFissTrace(formatFissTrace(t))` equals `t`. */
export function formatFissTrace(transactions: readonly TraceTransaction[]): string {
  let text = '';
  for (const t of transactions) for (const r of t.requests) text += `${t.id},0,1,${r.lock},${MODE_CODE[r.mode]}\n`;
  return text;
}

/** Transactions as the transaction layer runs them (normalized lock sets), typed `trace`. */
export function traceTemplates(transactions: readonly TraceTransaction[]): TxnTemplate[] {
  const problems: string[] = [];
  const templates: TxnTemplate[] = [];
  for (const t of transactions) {
    try {
      templates.push({ type: 'trace', locks: normalizeLockSet(t.requests) });
    } catch (error) {
      problems.push(`trace transaction ${t.id}: ${error instanceof ConfigError ? error.issues.join('; ') : String(error)}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems.length > 20 ? [...problems.slice(0, 20), `… and ${problems.length - 20} more`] : problems);
  return templates;
}

/** Numbers templates as trace transactions 0, 1, …, requests in acquisition order. */
export function templatesToTrace(templates: readonly TxnTemplate[]): TraceTransaction[] {
  return templates.map((t, id) => ({ id, requests: t.locks }));
}
