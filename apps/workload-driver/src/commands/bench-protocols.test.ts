import { describe, expect, it } from 'vitest';
import { optionsNotShared, readProtocolList } from './bench.js';

describe('bench --protocol lists', () => {
  it('reads a comma-separated list once per id, and lists every unknown id', () => {
    const problems: string[] = [];
    expect(readProtocolList('caslock, dslr,caslock', problems)).toEqual(['caslock', 'dslr']);
    expect(problems).toEqual([]);
    readProtocolList('nope,caslock,zz', problems);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^--protocol: unknown protocol "nope"/);
    readProtocolList(' , ', problems);
    expect(problems[2]).toMatch(/expected a protocol id/);
  });

  it('refuses an --opt that one of several protocols does not have, naming it', () => {
    expect(optionsNotShared(['caslock', 'dslr'], { mutantSkipCompare: 'true' })).toEqual([
      '--opt mutantSkipCompare: not an option of dslr (with several protocols every --opt applies to each)',
    ]);
    expect(optionsNotShared(['caslock'], { mutantSkipCompare: 'true' })).toEqual([]);
  });

  it('names the new option and its value in ns when every protocol renamed the option given', () => {
    expect(optionsNotShared(['dslr', 'drtm'], { leaseMs: '2' })).toEqual(['--opt leaseMs was renamed leaseNs (nanoseconds): leaseNs=2000000']);
    expect(optionsNotShared(['dslr', 'caslock'], { leaseMs: '2' })).toEqual(['--opt leaseMs: not an option of dslr, caslock (with several protocols every --opt applies to each)']);
    expect(optionsNotShared(['dslr', 'drtm'], { leaseNs: '2000000' })).toEqual([]);
  });
});
