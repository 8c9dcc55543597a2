import { ConfigError } from '@lockfabric/ports';
import type { ProtocolOptions } from './protocol.js';

/**
 * Duration options are in nanoseconds (`…Ns`) in every protocol. These are the names they had in
 * other units; giving one is a configuration error that names the new option and the value in ns.
 */
export const RENAMED_DURATION_OPTIONS: Readonly<Record<string, { readonly name: string; readonly nsPerUnit: number }>> = {
  acquireTimeoutMs: { name: 'acquireTimeoutNs', nsPerUnit: 1_000_000 },
  acquireTimeoutStaggerMs: { name: 'acquireTimeoutStaggerNs', nsPerUnit: 1_000_000 },
  leaseMs: { name: 'leaseNs', nsPerUnit: 1_000_000 },
  pushBackUs: { name: 'pushBackNs', nsPerUnit: 1_000 },
  refetchTimeoutMs: { name: 'refetchTimeoutNs', nsPerUnit: 1_000_000 },
  retransmitMs: { name: 'retransmitNs', nsPerUnit: 1_000_000 },
  suspectAfterMs: { name: 'suspectAfterNs', nsPerUnit: 1_000_000 },
  syncPeriodMs: { name: 'syncPeriodNs', nsPerUnit: 1_000_000 },
  syncTimeoutUs: { name: 'syncTimeoutNs', nsPerUnit: 1_000 },
};

/**
 * The problem to report for an old duration option name (`subject` starts the sentence, e.g.
 * "dslr option"), or undefined when `name` is not an old name or `knows` lacks its new name.
 */
export function renamedOptionProblem(subject: string, name: string, raw: unknown, knows: (name: string) => boolean): string | undefined {
  const renamed = RENAMED_DURATION_OPTIONS[name];
  if (renamed === undefined || !knows(renamed.name)) return undefined;
  const given = typeof raw === 'number' ? raw : typeof raw === 'string' ? (raw === 'inf' || raw === '∞' ? Infinity : Number(raw)) : Number.NaN;
  const example = Number.isNaN(given) ? '' : `: ${renamed.name}=${Number.isFinite(given) ? String(given * renamed.nsPerUnit) : 'inf'}`;
  return `${subject} ${name} was renamed ${renamed.name} (nanoseconds)${example}`;
}

/** Reads typed protocol options, collecting every problem before failing with one ConfigError. */
export class OptionReader {
  private readonly problems: string[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly protocol: string,
    private readonly options: ProtocolOptions = {},
  ) {}

  boolean(name: string, fallback: boolean): boolean {
    this.seen.add(name);
    const raw = this.options[name];
    if (raw === undefined) return fallback;
    if (typeof raw === 'boolean') return raw;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    this.problems.push(`${this.protocol} option ${name}: expected true or false, got ${JSON.stringify(raw)}`);
    return fallback;
  }

  number(name: string, fallback: number, range: { min?: number; max?: number; integer?: boolean } = {}): number {
    this.seen.add(name);
    const raw = this.options[name];
    if (raw === undefined) return fallback;
    return this.parseNumber(name, raw, fallback, range);
  }

  private parseNumber(name: string, raw: string | number | boolean, fallback: number, range: { min?: number; max?: number; integer?: boolean }): number {
    const value = typeof raw === 'number' ? raw : raw === 'inf' || raw === '∞' ? Infinity : Number(raw);
    const bad =
      typeof raw === 'boolean' ||
      Number.isNaN(value) ||
      (range.integer === true && Number.isFinite(value) && !Number.isInteger(value)) ||
      (range.min !== undefined && value < range.min) ||
      (range.max !== undefined && value > range.max);
    if (bad) {
      const bounds = [range.min !== undefined ? `≥ ${range.min}` : '', range.max !== undefined ? `≤ ${range.max}` : '']
        .filter(Boolean)
        .join(' and ');
      this.problems.push(
        `${this.protocol} option ${name}: expected ${range.integer ? 'an integer' : 'a number'}${bounds ? ' ' + bounds : ''}, got ${JSON.stringify(raw)}`,
      );
      return fallback;
    }
    return value;
  }

  choice<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    this.seen.add(name);
    const raw = this.options[name];
    if (raw === undefined) return fallback;
    if (typeof raw === 'string' && (allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${this.protocol} option ${name}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
    return fallback;
  }

  /** Throws a ConfigError naming every bad or unknown option. */
  done(): void {
    for (const name of Object.keys(this.options)) {
      if (this.seen.has(name)) continue;
      const renamed = renamedOptionProblem(`${this.protocol} option`, name, this.options[name], (newName) => this.seen.has(newName));
      this.problems.push(renamed ?? `${this.protocol} has no option ${JSON.stringify(name)}`);
    }
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}
