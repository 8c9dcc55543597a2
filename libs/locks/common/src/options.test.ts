import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { OptionReader, RENAMED_DURATION_OPTIONS } from './options.js';

function problems(read: (reader: OptionReader) => void, options: Record<string, string | number>): string[] {
  const reader = new OptionReader('p', options);
  read(reader);
  try {
    reader.done();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
}

const leaseReader = (reader: OptionReader): void => void reader.number('leaseNs', 10_000_000, { min: 1_000 });

describe('OptionReader: duration options renamed to ns', () => {
  it('names the new option, its unit and the value converted to ns for an old name', () => {
    expect(problems(leaseReader, { leaseMs: '5' })).toEqual(['p option leaseMs was renamed leaseNs (nanoseconds): leaseNs=5000000']);
    expect(problems(leaseReader, { leaseMs: 0.2 })).toEqual(['p option leaseMs was renamed leaseNs (nanoseconds): leaseNs=200000']);
    expect(problems((r) => void r.number('pushBackNs', 20_000), { pushBackUs: '20' })).toEqual(['p option pushBackUs was renamed pushBackNs (nanoseconds): pushBackNs=20000']);
    expect(problems((r) => void r.number('suspectAfterNs', Infinity), { suspectAfterMs: 'inf' })).toEqual(['p option suspectAfterMs was renamed suspectAfterNs (nanoseconds): suspectAfterNs=inf']);
    expect(problems(leaseReader, { leaseMs: 'soon' })).toEqual(['p option leaseMs was renamed leaseNs (nanoseconds)']);
  });

  it('lists an old name beside the other problems, and never accepts it', () => {
    expect(problems(leaseReader, { leaseMs: '5', leaseNs: 'x', other: 1 })).toEqual([
      'p option leaseNs: expected a number ≥ 1000, got "x"',
      'p option leaseMs was renamed leaseNs (nanoseconds): leaseNs=5000000',
      'p has no option "other"',
    ]);
  });

  it('calls an old name unknown where the protocol has no option under the new name', () => {
    expect(problems((r) => void r.number('backoffNs', 1), { leaseMs: '5' })).toEqual(['p has no option "leaseMs"']);
  });

  it('maps every old name to an …Ns name', () => {
    for (const [old, renamed] of Object.entries(RENAMED_DURATION_OPTIONS)) {
      expect(renamed.name).toMatch(/Ns$/);
      expect(old.replace(/(Ms|Us)$/, 'Ns')).toBe(renamed.name);
      expect(renamed.nsPerUnit).toBe(old.endsWith('Ms') ? 1_000_000 : 1_000);
    }
  });
});

/** Old names a reader lets through for a protocol that reads every new name (none when the guard holds). */
function oldNamesLetThrough(makeReader: (options: Record<string, string>) => OptionReader): string[] {
  return Object.entries(RENAMED_DURATION_OPTIONS).flatMap(([old, renamed]) => {
    const reader = makeReader({ [old]: '1' });
    reader.number(renamed.name, 0);
    try {
      reader.done();
      return [old];
    } catch (error) {
      return error instanceof ConfigError && error.issues.some((issue) => issue.includes(`${old} was renamed ${renamed.name} (nanoseconds)`)) ? [] : [old];
    }
  });
}

/** Test-only mutant: reads an old name as an alias of the new one in its old unit (what the guard forbids). */
class AliasingReader extends OptionReader {
  constructor(private readonly given: Record<string, string>) {
    super('p', given);
  }
  override number(name: string, fallback: number, range?: { min?: number; max?: number; integer?: boolean }): number {
    const old = Object.entries(RENAMED_DURATION_OPTIONS).find(([, renamed]) => renamed.name === name)?.[0];
    if (old !== undefined && this.given[old] !== undefined) return new OptionReader('p', { [name]: this.given[old]! }).number(name, fallback, range);
    return super.number(name, fallback, range);
  }
  override done(): void {}
}

describe('the renamed-option guard, checked against a mutant', () => {
  it('refuses every old name; a reader that aliases old names is caught', () => {
    expect(oldNamesLetThrough((options) => new OptionReader('p', options))).toEqual([]);
    expect(oldNamesLetThrough((options) => new AliasingReader(options))).toEqual(Object.keys(RENAMED_DURATION_OPTIONS));
  });
});
