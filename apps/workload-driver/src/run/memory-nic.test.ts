import { describe, expect, it } from 'vitest';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { iopsCapOf, nicFigures } from './memory-nic.js';

const record = (argv: string[]): ProcessRecord => ({ name: 'memory-0', role: 'memory', node: 0, pid: 1, log: 'x', argv });

describe('memory-node NIC figures on live', () => {
  it('count the verbs served during the run and their share of the cap', () => {
    const figures = nicFigures({ 'memory-0': 100, 'memory-1': 7 }, { 'memory-0': 2_100, 'memory-1': 7, 'memory-2': 50 }, 2e9, { 'memory-0': 2_000 });
    expect(figures.verbs).toEqual({ 'memory-0': 2_000, 'memory-1': 0 });
    expect(figures.utilisation).toEqual({ 'memory-0': 0.5 });
  });

  it('read the cap from the node flag, none when absent or not positive', () => {
    expect(iopsCapOf(record(['node', '--memory.iops-cap=5000']))).toBe(5_000);
    expect(iopsCapOf(record(['node']))).toBeUndefined();
    expect(iopsCapOf(record(['--memory.iops-cap=0']))).toBeUndefined();
  });
});
