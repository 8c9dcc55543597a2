import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { ConfigError, errorMessage } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { parseDistribution, parseLockIdSpace, validateWorkloadSpec } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';

export type Options = NonNullable<ParseArgsConfig['options']>;

/** Flags every workload-running command understands. */
export const WORKLOAD_FLAGS: Options = {
  protocol: { type: 'string', short: 'p' },
  clients: { type: 'string', short: 'c' },
  locks: { type: 'string', short: 'l' },
  'read-ratio': { type: 'string' },
  distribution: { type: 'string', short: 'd' },
  'lock-ids': { type: 'string' },
  'duration-ms': { type: 'string' },
  operations: { type: 'string', short: 'n' },
  'think-ns': { type: 'string' },
  'cs-ns': { type: 'string' },
  seed: { type: 'string' },
  'timeout-ms': { type: 'string' },
  opt: { type: 'string', multiple: true },
  racks: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export function parseCommandArgs(command: string, argv: readonly string[], options: Options): Record<string, string | boolean | string[] | undefined> {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
    return { ...(values as Record<string, string | boolean | string[] | undefined>), _: positionals as unknown as string[] };
  } catch (error) {
    throw new ConfigError([`lockfabric ${command}: ${errorMessage(error)} (see lockfabric ${command} --help)`]);
  }
}

/** Reads numeric flags, collecting every problem. */
export class FlagReader {
  readonly problems: string[] = [];
  constructor(private readonly values: Record<string, unknown>) {}

  number(flag: string, fallback: number, check: { integer?: boolean; min?: number; max?: number } = {}): number {
    const raw = this.values[flag];
    if (raw === undefined) return fallback;
    const value = Number(raw);
    const bad = typeof raw !== 'string' || raw.trim() === '' || Number.isNaN(value) || (check.integer && !Number.isInteger(value)) || (check.min !== undefined && value < check.min) || (check.max !== undefined && value > check.max);
    if (bad) {
      const range = [check.min !== undefined ? `≥ ${check.min}` : '', check.max !== undefined ? `≤ ${check.max}` : ''].filter(Boolean).join(' and ');
      this.problems.push(`--${flag}: expected ${check.integer ? 'an integer' : 'a number'}${range ? ' ' + range : ''}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return value;
  }

  optionalNumber(flag: string, check: { integer?: boolean; min?: number } = {}): number | undefined {
    return this.values[flag] === undefined ? undefined : this.number(flag, 0, check);
  }

  /** `P` or `P,P,…`: ports 1-65535. */
  portList(flag: string, fallback: readonly number[]): number[] {
    const raw = this.values[flag];
    if (raw === undefined) return [...fallback];
    const parts = typeof raw === 'string' ? raw.split(',').map((p) => p.trim()) : [];
    const ports = parts.map(Number);
    if (parts.length === 0 || ports.some((p, i) => parts[i] === '' || !Number.isInteger(p) || p < 1 || p > 65535)) {
      this.problems.push(`--${flag}: expected a port 1-65535 or a comma-separated list of them, got ${JSON.stringify(raw)}`);
      return [...fallback];
    }
    return ports;
  }

  string(flag: string, fallback: string): string {
    const raw = this.values[flag];
    return typeof raw === 'string' ? raw : fallback;
  }

  done(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

export interface WorkloadDefaults {
  readonly clients: number;
  readonly locks: number;
  readonly readRatio: number;
  readonly distribution: string;
  readonly operations?: number;
  readonly durationMs?: number;
  readonly timeoutMs?: number;
  readonly criticalSectionNs?: number;
  readonly thinkNs?: number;
}

export function readWorkload(values: Record<string, unknown>, defaults: WorkloadDefaults): { spec: WorkloadSpec; protocolOptions: ProtocolOptions; reader: FlagReader } {
  const reader = new FlagReader(values);
  const durationMs = reader.optionalNumber('duration-ms', { min: 1 });
  const operations = reader.optionalNumber('operations', { integer: true, min: 1 });
  const bounded = durationMs !== undefined || operations !== undefined;
  let distribution: WorkloadSpec['distribution'] = 'uniform';
  try {
    distribution = parseDistribution(reader.string('distribution', defaults.distribution));
  } catch (error) {
    reader.problems.push(`--distribution: ${errorMessage(error)}`);
  }
  let lockIds: WorkloadSpec['lockIds'] = 'dense';
  try {
    lockIds = parseLockIdSpace(reader.string('lock-ids', 'dense'));
  } catch (error) {
    reader.problems.push(`--lock-ids: ${error instanceof ConfigError ? error.issues.join('; ') : String(error)}`);
  }
  const timeoutMs = reader.optionalNumber('timeout-ms', { min: 0 }) ?? defaults.timeoutMs;
  const spec: WorkloadSpec = {
    clients: reader.number('clients', defaults.clients, { integer: true, min: 1 }),
    locks: reader.number('locks', defaults.locks, { integer: true, min: 1 }),
    readRatio: reader.number('read-ratio', defaults.readRatio, { min: 0, max: 1 }),
    distribution,
    ...(lockIds === 'sparse' ? { lockIds } : {}),
    ...(bounded ? {} : defaults.durationMs !== undefined ? { durationMs: defaults.durationMs } : {}),
    ...(bounded ? {} : defaults.operations !== undefined ? { operations: defaults.operations } : {}),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(operations !== undefined ? { operations } : {}),
    thinkNs: reader.number('think-ns', defaults.thinkNs ?? 0, { min: 0 }),
    criticalSectionNs: reader.number('cs-ns', defaults.criticalSectionNs ?? 0, { min: 0 }),
    seed: reader.number('seed', 1, { integer: true, min: 0 }),
    ...(timeoutMs !== undefined && timeoutMs > 0 ? { timeoutMs } : {}),
  };
  const protocolOptions = readProtocolOptions(values, reader);
  reader.problems.push(...validateWorkloadSpec(spec));
  return { spec, protocolOptions, reader };
}

/** `--opt KEY=VALUE` pairs (repeatable) as protocol options; malformed pairs go to `reader.problems`. */
export function readProtocolOptions(values: Record<string, unknown>, reader: FlagReader): Record<string, string> {
  const protocolOptions: Record<string, string> = {};
  for (const pair of (values['opt'] as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) reader.problems.push(`--opt: expected key=value, got ${JSON.stringify(pair)}`);
    else protocolOptions[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  // --racks R: FissLock's lock ids over R switches (§5.4); the run's substrate and the protocol both read the `racks` option
  const racks = values['racks'];
  if (typeof racks === 'string') {
    if (!/^[1-9]\d*$/.test(racks)) reader.problems.push(`--racks: expected an integer ≥ 1, got ${JSON.stringify(racks)}`);
    else if (protocolOptions['racks'] !== undefined && protocolOptions['racks'] !== racks) reader.problems.push(`--racks ${racks} and --opt racks=${protocolOptions['racks']} disagree; give one`);
    else if (racks !== '1') protocolOptions['racks'] = racks;
  }
  return protocolOptions;
}

/** The flags that reproduce a workload, for one-line reproductions. */
export function workloadFlags(protocol: string, spec: WorkloadSpec, protocolOptions: ProtocolOptions): string[] {
  const distribution = spec.distribution === 'uniform' ? 'uniform' : `zipf:${spec.distribution.zipf}${spec.distribution.scrambled ? ':scrambled' : ''}`;
  return [
    `--protocol ${protocol}`,
    `--clients ${spec.clients}`,
    `--locks ${spec.locks}`,
    `--read-ratio ${spec.readRatio}`,
    `--distribution ${distribution}`,
    ...(spec.lockIds === 'sparse' ? ['--lock-ids sparse'] : []),
    ...(spec.durationMs !== undefined ? [`--duration-ms ${spec.durationMs}`] : []),
    ...(spec.operations !== undefined ? [`--operations ${spec.operations}`] : []),
    `--think-ns ${spec.thinkNs}`,
    `--cs-ns ${spec.criticalSectionNs}`,
    ...(spec.timeoutMs !== undefined ? [`--timeout-ms ${spec.timeoutMs}`] : []),
    `--seed ${spec.seed}`,
    ...Object.entries(protocolOptions).map(([k, v]) => `--opt ${k}=${v}`),
  ];
}
