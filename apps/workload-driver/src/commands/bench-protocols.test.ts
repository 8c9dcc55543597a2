import { describe, expect, it } from 'vitest';
import { optionsNotShared, readProtocolList, renamedOptionWarnings } from './bench.js';

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

  it('warns of an option given under its old name, once per protocol that renamed it, and still accepts it', () => {
    expect(renamedOptionWarnings(['drtm'], { leaseNs: '1000000' })).toEqual([expect.stringMatching(/drtm option leaseNs \(ns\) is deprecated: use leaseMs/)]);
    expect(renamedOptionWarnings(['drtm', 'caslock'], { leaseMs: '1' })).toEqual([]);
    expect(optionsNotShared(['drtm', 'drtm'], { leaseNs: '1000000' })).toEqual([]);
  });
});
