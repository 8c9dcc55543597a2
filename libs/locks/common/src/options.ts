import { ConfigError } from '@lockfabric/ports';
import type { ProtocolOptions } from './protocol.js';

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

  /**
   * `renamedFrom`: the option's old name, still accepted (callers tell users it is deprecated);
   * its value times `scale` is the value under the new name, for a unit change such as ns to ms.
   * Giving both names is a problem.
   */
  number(name: string, fallback: number, range: { min?: number; max?: number; integer?: boolean } = {}, renamedFrom?: { name: string; scale: number }): number {
    this.seen.add(name);
    const raw = this.options[name];
    if (renamedFrom !== undefined) {
      this.seen.add(renamedFrom.name);
      const old = this.options[renamedFrom.name];
      if (old !== undefined && raw !== undefined) this.problems.push(`${this.protocol} option ${renamedFrom.name} is the old name of ${name}: give only ${name}`);
      else if (old !== undefined) return this.parseNumber(name, old, fallback, range, renamedFrom);
    }
    if (raw === undefined) return fallback;
    return this.parseNumber(name, raw, fallback, range);
  }

  private parseNumber(name: string, raw: string | number | boolean, fallback: number, range: { min?: number; max?: number; integer?: boolean }, renamedFrom?: { name: string; scale: number }): number {
    const given = typeof raw === 'number' ? raw : raw === 'inf' || raw === '∞' ? Infinity : Number(raw);
    const value = renamedFrom ? given * renamedFrom.scale : given;
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
      const via = renamedFrom ? ` (given as ${renamedFrom.name}, times ${renamedFrom.scale})` : '';
      this.problems.push(
        `${this.protocol} option ${name}: expected ${range.integer ? 'an integer' : 'a number'}${bounds ? ' ' + bounds : ''}, got ${JSON.stringify(raw)}${via}`,
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
      if (!this.seen.has(name)) this.problems.push(`${this.protocol} has no option ${JSON.stringify(name)}`);
    }
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}
