import { ConfigError } from '@lockfabric/ports';
import type { PacketType } from '@lockfabric/ports';
import { MAX_DROP_SUBJECTS } from './cut-control.js';
import { isSubjectPattern } from './nats-delivery-filter.js';

export const CHAOS_VERBS = ['kill', 'pause', 'resume', 'restart', 'partition', 'switch-faults', 'nats-restart'] as const;
export type ChaosVerb = (typeof CHAOS_VERBS)[number];

const PACKET_TYPES: readonly PacketType[] = ['acquire', 'release', 'grant', 'reject', 'ack', 'transfer', 'free', 'push-back', 'notify', 'probe'];

/** Which link of the switch a fault acts on (the wire's FaultDirection). */
export const FAULT_DIRECTIONS = ['egress', 'ingress', 'both'] as const;
export type SwitchFaultDirection = (typeof FAULT_DIRECTIONS)[number];

/** Packet faults for `switch-faults`; all zero (or `clear`) removes every fault of the switch. */
export interface SwitchFaultRequest {
  readonly loss: number;
  readonly duplicate: number;
  readonly reorder: number;
  readonly delayNs: number;
  /** With it, each affected packet is delayed uniformly in [delayNs, delayMaxNs]. */
  readonly delayMaxNs?: number;
  /** Absent: egress (copies leaving the switch), as before ingress faults existed. */
  readonly direction?: SwitchFaultDirection;
  readonly packetType?: PacketType;
  readonly machine?: number;
  readonly clear: boolean;
}

/** One chaos action, validated: what to do, to which process, and where (local cluster or Kubernetes). */
export interface ChaosRequest {
  readonly verb: ChaosVerb;
  /** Process name as in cluster.json (`compute-3`, `memory-0`, `switch-4`, `coordinator-5`, `nats`). */
  readonly target: string;
  readonly dir: string;
  /** `partition`: how long the cut lasts before it heals. */
  readonly durationMs: number;
  /** `partition --subjects`: only NATS deliveries to the target on these patterns (under the cluster prefix) are dropped. */
  readonly subjects?: readonly string[];
  readonly faults?: SwitchFaultRequest;
  /** `switch-faults`: talk to this SwitchControl address instead of the one in cluster.json. */
  readonly switchGrpc?: string;
  /** Kubernetes: context, namespace, and how many memory nodes come before the compute node ids (default 1). */
  readonly kube?: { readonly context: string; readonly namespace: string; readonly memoryNodes?: number };
  readonly dryRun: boolean;
  readonly json: boolean;
}

export interface ChaosFlags {
  readonly _: readonly string[];
  readonly [flag: string]: string | boolean | readonly string[] | undefined;
}

export const DEFAULT_PARTITION_MS = 5_000;
export const DEFAULT_KUBE_NAMESPACE = 'lockfabric';
/** Process names: a role and a node id, or nats. Kept to what a subject token and a label value allow. */
const TARGET = /^(?:(?:compute|memory|switch|coordinator)-\d+|nats)$/;
/** On Kubernetes a StatefulSet pod name names a node as well. */
const POD_TARGET = /^(?:compute|memory)-node-\d+$/;

/**
 * Validates parsed flags into a request, collecting every problem into one ConfigError so a user
 * fixes them all at once. `defaultDir` is the cluster state directory when --dir is absent.
 */
export function chaosRequestFrom(values: ChaosFlags, defaultDir: string): ChaosRequest {
  const problems: string[] = [];
  const [verbArg, targetArg, ...extra] = values._;
  const verb = CHAOS_VERBS.find((v) => v === verbArg);
  if (verbArg === undefined) problems.push(`missing verb: one of ${CHAOS_VERBS.join(', ')}`);
  else if (!verb) problems.push(`unknown verb ${JSON.stringify(verbArg)}: one of ${CHAOS_VERBS.join(', ')}`);
  // nats-restart has an implied target; switch-faults defaults to the only switch of a local cluster.
  const target = targetArg ?? (verb === 'nats-restart' ? 'nats' : verb === 'switch-faults' ? 'switch' : undefined);
  if (verb && target === undefined) problems.push(`${verb} needs a target process, e.g. compute-2, memory-0, switch-3 or nats`);
  else if (target !== undefined && target !== 'switch' && !TARGET.test(target) && !(values['kube-context'] !== undefined && POD_TARGET.test(target))) {
    problems.push(`target ${JSON.stringify(target)} is not a process name (compute-N, memory-N, switch-N, coordinator-N or nats)`);
  }
  if (verb === 'nats-restart' && target !== undefined && target !== 'nats') problems.push(`nats-restart restarts the NATS server; its target can only be nats, got ${JSON.stringify(target)}`);
  if (verb === 'switch-faults' && target !== undefined && !target.startsWith('switch')) problems.push(`switch-faults needs a switch target (switch-N), got ${JSON.stringify(target)}`);
  if (extra.length > 0) problems.push(`unexpected arguments: ${extra.join(' ')}`);

  const number = (flag: string, fallback: number, check: { min?: number; max?: number; integer?: boolean } = {}): number => {
    const raw = values[flag];
    if (raw === undefined) return fallback;
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
    const bad = Number.isNaN(value) || (check.integer === true && !Number.isInteger(value)) || (check.min !== undefined && value < check.min) || (check.max !== undefined && value > check.max);
    if (bad) {
      problems.push(`--${flag}: expected ${check.integer ? 'an integer' : 'a number'}${check.min !== undefined ? ` ≥ ${check.min}` : ''}${check.max !== undefined ? ` ≤ ${check.max}` : ''}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return value;
  };
  const durationMs = number('duration-ms', DEFAULT_PARTITION_MS, { min: 1, integer: true });
  if (values['duration-ms'] !== undefined && verb !== 'partition') problems.push(`--duration-ms applies to partition only`);
  let subjects: string[] | undefined;
  if (values['subjects'] !== undefined) {
    subjects = String(values['subjects']).split(',').map((s) => s.trim());
    if (verb !== 'partition') problems.push('--subjects applies to partition only');
    if (subjects.length > MAX_DROP_SUBJECTS) problems.push(`--subjects: at most ${MAX_DROP_SUBJECTS} patterns`);
    for (const s of subjects) if (!isSubjectPattern(s)) problems.push(`--subjects: ${JSON.stringify(s)} is not a NATS subject pattern (dot-separated tokens, *, a final >), e.g. ctl.fiss.2.>`);
    if (values['kube-context'] !== undefined) problems.push('--subjects works on a local cluster with the cut proxy only (a NetworkPolicy cannot drop some NATS subjects)');
  }

  const faultFlags = ['loss', 'duplicate', 'reorder', 'delay-ns', 'delay-max-ns', 'direction', 'packet-type', 'machine', 'clear'];
  let faults: SwitchFaultRequest | undefined;
  if (verb === 'switch-faults') {
    const packetType = values['packet-type'];
    if (packetType !== undefined && !PACKET_TYPES.includes(packetType as PacketType)) problems.push(`--packet-type: one of ${PACKET_TYPES.join(', ')}, got ${JSON.stringify(packetType)}`);
    const machine = values['machine'] === undefined ? undefined : number('machine', 0, { min: 0, integer: true });
    const direction = values['direction'];
    const knownDirection = typeof direction === 'string' && FAULT_DIRECTIONS.includes(direction as SwitchFaultDirection);
    if (direction !== undefined && !knownDirection) problems.push(`--direction: one of ${FAULT_DIRECTIONS.join(', ')}, got ${JSON.stringify(direction)}`);
    const delayNs = number('delay-ns', 0, { min: 0, max: 10_000_000_000, integer: true });
    const delayMaxNs = values['delay-max-ns'] === undefined ? undefined : number('delay-max-ns', 0, { min: 0, max: 10_000_000_000, integer: true });
    if (delayMaxNs !== undefined && delayMaxNs < delayNs) problems.push(`--delay-max-ns: the top of the delay range must be at least --delay-ns (${delayNs}), got ${delayMaxNs}`);
    faults = {
      loss: number('loss', 0, { min: 0, max: 1 }),
      duplicate: number('duplicate', 0, { min: 0, max: 1 }),
      reorder: number('reorder', 0, { min: 0, max: 1 }),
      delayNs,
      ...(delayMaxNs === undefined ? {} : { delayMaxNs }),
      ...(knownDirection ? { direction: direction as SwitchFaultDirection } : {}),
      ...(typeof packetType === 'string' && PACKET_TYPES.includes(packetType as PacketType) ? { packetType: packetType as PacketType } : {}),
      ...(machine === undefined ? {} : { machine }),
      clear: values['clear'] === true,
    };
    const effective = faults.loss > 0 || faults.duplicate > 0 || faults.reorder > 0 || faults.delayNs > 0 || (faults.delayMaxNs ?? 0) > 0;
    if (faults.clear && effective) problems.push('--clear removes every fault; it cannot be combined with --loss, --duplicate, --reorder or --delay-ns');
    if (!faults.clear && !effective) problems.push('switch-faults needs --loss, --duplicate, --reorder or --delay-ns (or --clear)');
  } else {
    const misplaced = faultFlags.filter((flag) => values[flag] !== undefined);
    if (misplaced.length > 0 && verb) problems.push(`${misplaced.map((f) => `--${f}`).join(', ')} apply to switch-faults only`);
  }
  const switchGrpc = typeof values['switch-grpc'] === 'string' ? values['switch-grpc'] : undefined;
  if (switchGrpc !== undefined && verb !== 'switch-faults') problems.push('--switch-grpc applies to switch-faults only');
  if (switchGrpc !== undefined && !/^[^\s:]+:\d{1,5}$/.test(switchGrpc)) problems.push(`--switch-grpc: expected host:port, got ${JSON.stringify(switchGrpc)}`);

  const context = values['kube-context'];
  const namespace = typeof values['namespace'] === 'string' ? values['namespace'] : DEFAULT_KUBE_NAMESPACE;
  if (context !== undefined && (typeof context !== 'string' || context.trim() === '')) problems.push('--kube-context: expected a context name');
  if (values['namespace'] !== undefined && context === undefined) problems.push('--namespace applies with --kube-context only');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)) problems.push(`--namespace: ${JSON.stringify(namespace)} is not a Kubernetes namespace name`);
  const memoryNodes = number('memory-nodes', 1, { min: 0, integer: true });
  if (values['memory-nodes'] !== undefined && context === undefined) problems.push('--memory-nodes applies with --kube-context only');
  const dryRun = values['dry-run'] === true;
  if (dryRun && context === undefined) problems.push('--dry-run prints kubectl commands and needs --kube-context (local actions have no dry run)');

  if (problems.length > 0 || !verb || target === undefined) throw new ConfigError(problems.map((p) => `lockfabric chaos: ${p}`));
  return {
    verb,
    target,
    dir: typeof values['dir'] === 'string' ? values['dir'] : defaultDir,
    durationMs,
    ...(subjects ? { subjects } : {}),
    ...(faults ? { faults } : {}),
    ...(switchGrpc ? { switchGrpc } : {}),
    ...(typeof context === 'string' ? { kube: { context, namespace, memoryNodes } } : {}),
    dryRun,
    json: values['json'] === true,
  };
}
