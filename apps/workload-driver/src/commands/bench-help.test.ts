import { describe, expect, it } from 'vitest';
import { BENCH_HELP, workloadHelp } from './bench.js';

// `bench --workload W --help`: the common flags and W's own, not every other workload's.
const SECTIONS: Record<string, readonly string[]> = {
  transactions: ['--subscribers', '--long-read-probability', '--max-attempts'],
  objectstore: ['--object-bytes'],
  btree: ['--fanout'],
  dynamic: ['--hot-locks'],
  smallbank: ['--accounts'],
};
const SECTION_OF: Record<string, string> = { tpcc: 'transactions', tatp: 'transactions', 'trace:x.txt': 'transactions', objectstore: 'objectstore', btree: 'btree', dynamic: 'dynamic', smallbank: 'smallbank' };

describe('bench help per workload', () => {
  for (const [workload, section] of Object.entries(SECTION_OF)) {
    it(`${workload}: its flags and the common ones only`, () => {
      const help = workloadHelp(workload)!;
      expect(help).toContain('--protocol, -p');
      for (const [name, flags] of Object.entries(SECTIONS)) for (const flag of flags) expect(help.includes(flag), `${flag} (${name})`).toBe(name === section);
    });
  }

  it('micro has no section of its own; an unknown workload falls back to the full help, which has them all', () => {
    const micro = workloadHelp('micro')!;
    for (const flag of Object.values(SECTIONS).flat()) {
      expect(micro).not.toContain(flag);
      expect(BENCH_HELP).toContain(flag);
    }
    expect(workloadHelp('nope')).toBeUndefined();
  });
});
