import { ConfigError } from '@lockfabric/ports';
import type { NodeId, PacketType } from '@lockfabric/ports';
import { PACKET_TYPES, isPacketType } from './packet-types.js';

/**
 * Which link of the switch a rule acts on. `egress` (the default): copies leaving the switch, after
 * the program decided; the machine is the one a copy goes to. `ingress`: packets on a machine's link
 * into the switch, before the program sees them, so a lost packet is never decided and a duplicate is
 * decided twice; the machine is the sender. `both`: the rule acts on either link, with its own draws.
 */
export type FaultDirection = 'egress' | 'ingress' | 'both';

export const FAULT_DIRECTIONS: readonly FaultDirection[] = ['egress', 'ingress', 'both'];

/**
 * One fault rule. It applies to a packet (ingress) or copy (egress) whose type is in `packetTypes`
 * (all types when absent) and whose machine — the egress machine, or the sender on ingress — is in
 * `machines` (all when absent). Probabilities are per packet or copy, in [0, 1]. Every matching rule
 * applies, each with its own draws, in the order listed.
 */
export interface FaultRule {
  /** Default `egress`, so a rule written before ingress faults existed keeps its meaning. */
  readonly direction?: FaultDirection;
  readonly packetTypes?: readonly PacketType[];
  readonly machines?: readonly NodeId[];
  /** The copy is lost. */
  readonly loss?: number;
  /** One extra copy is delivered (with its own delay draws). */
  readonly duplicate?: number;
  /** The copy is held back by a uniform delay in [delayNsMin, delayNsMax]. */
  readonly delay?: number;
  readonly delayNsMin?: number;
  readonly delayNsMax?: number;
  /** The copy is held back by a uniform delay in [0, reorderNsMax], so later packets overtake it. */
  readonly reorder?: number;
  readonly reorderNsMax?: number;
}

/** Switch fault injection as plain JSON (config files, `ctl.fault.<target>` messages). */
export interface FaultSpec {
  readonly rules: readonly FaultRule[];
}

export const NO_FAULTS: FaultSpec = { rules: [] };

const RULE_KEYS = ['direction', 'packetTypes', 'machines', 'loss', 'duplicate', 'delay', 'delayNsMin', 'delayNsMax', 'reorder', 'reorderNsMax'];
const PROBABILITY_KEYS = ['loss', 'duplicate', 'delay', 'reorder'] as const;

/**
 * Checks a fault spec from outside (JSON, flags) and returns it typed. Throws a `ConfigError`
 * listing every problem, each naming its path, e.g. `faults.rules[0].loss: …`.
 */
export function parseFaultSpec(input: unknown, path = 'faults'): FaultSpec {
  const issues: string[] = [];
  if (!isRecord(input)) throw new ConfigError([`${path}: must be an object like { "rules": [...] }, got ${describe(input)}`]);
  for (const key of Object.keys(input)) if (key !== 'rules') issues.push(`${path}.${key}: unknown key (expected only "rules")`);
  const rules = input['rules'];
  if (!Array.isArray(rules)) {
    issues.push(`${path}.rules: must be an array of rules, got ${describe(rules)}`);
    throw new ConfigError(issues);
  }
  rules.forEach((rule, i) => checkRule(rule, `${path}.rules[${i}]`, issues));
  if (issues.length > 0) throw new ConfigError(issues);
  return input as unknown as FaultSpec;
}

function checkRule(rule: unknown, at: string, issues: string[]): void {
  if (!isRecord(rule)) {
    issues.push(`${at}: must be an object, got ${describe(rule)}`);
    return;
  }
  for (const key of Object.keys(rule)) {
    if (!RULE_KEYS.includes(key)) issues.push(`${at}.${key}: unknown key (expected one of ${RULE_KEYS.join(', ')})`);
  }
  const direction = rule['direction'];
  if (direction !== undefined && !FAULT_DIRECTIONS.includes(direction as FaultDirection)) {
    issues.push(`${at}.direction: must be one of ${FAULT_DIRECTIONS.join(', ')} (omit it for egress), got ${describe(direction)}`);
  }
  const types = rule['packetTypes'];
  if (types !== undefined) {
    if (!Array.isArray(types) || types.length === 0) {
      issues.push(`${at}.packetTypes: must be a non-empty array of packet types (omit it for all types), got ${describe(types)}`);
    } else {
      types.forEach((t, j) => {
        if (!isPacketType(t)) issues.push(`${at}.packetTypes[${j}]: unknown packet type ${describe(t)} (known: ${PACKET_TYPES.join(', ')})`);
      });
    }
  }
  const machines = rule['machines'];
  if (machines !== undefined) {
    if (!Array.isArray(machines) || machines.length === 0) {
      issues.push(`${at}.machines: must be a non-empty array of machine ids (omit it for all machines), got ${describe(machines)}`);
    } else {
      machines.forEach((m, j) => {
        if (!Number.isSafeInteger(m) || (m as number) < 0) issues.push(`${at}.machines[${j}]: must be a non-negative integer machine id, got ${describe(m)}`);
      });
    }
  }
  let effective = false;
  for (const key of PROBABILITY_KEYS) {
    const p = rule[key];
    if (p === undefined) continue;
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 1) {
      issues.push(`${at}.${key}: probability must be a number in [0, 1], got ${describe(p)}`);
    } else if (p > 0) effective = true;
  }
  checkDuration(rule, at, 'delay', ['delayNsMin', 'delayNsMax'], issues);
  checkDuration(rule, at, 'reorder', ['reorderNsMax'], issues);
  if (!effective && !issues.some((issue) => issue.startsWith(`${at}.`))) {
    issues.push(`${at}: has no effect (set at least one of ${PROBABILITY_KEYS.join(', ')} above 0)`);
  }
}

/** Durations are non-negative ns, min ≤ max, and present exactly when their probability is. */
function checkDuration(rule: Record<string, unknown>, at: string, probabilityKey: 'delay' | 'reorder', keys: readonly string[], issues: string[]): void {
  let ok = true;
  for (const key of keys) {
    const v = rule[key];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
      issues.push(`${at}.${key}: must be a non-negative number of ns, got ${describe(v)}`);
      ok = false;
    }
  }
  if (!ok) return;
  const maxKey = keys[keys.length - 1] as string;
  const max = rule[maxKey] as number | undefined;
  const min = keys.length > 1 ? ((rule[keys[0] as string] as number | undefined) ?? 0) : 0;
  const p = rule[probabilityKey];
  const active = typeof p === 'number' && p > 0;
  if (active && (max === undefined || max <= 0)) issues.push(`${at}.${maxKey}: required and above 0 when ${probabilityKey} > 0`);
  if (!active && keys.some((key) => rule[key] !== undefined)) issues.push(`${at}.${keys.join('/')}: given but ${probabilityKey} is not above 0`);
  if (max !== undefined && min > max) issues.push(`${at}.${keys[0]}: ${min} exceeds ${maxKey} ${max}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number') return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
